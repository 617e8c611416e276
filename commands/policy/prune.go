package policy

import "github.com/fledger/fledger/events"

// PruneReasonStale is SessionPruned.Reason for a session idle for longer
// than the maintenance age.
const PruneReasonStale = "stale"

// PruneStale decides session maintenance for one session (OpenClaw's
// `session.maintenance` pruneStaleEntries, run by `openclaw sessions
// cleanup --enforce`): a session whose last activity (activeAt, Unix ms:
// the time of its last event or of the last event of one of its turns)
// is older than pruneAfterMs before now is pruned — one SessionPruned —
// unless one of its turns is running. A session with no known activity
// (activeAt 0) is kept, as OpenClaw keeps an entry without updatedAt.
// pruneAfterMs must be positive; nothing is decided otherwise. A prune
// folded while a turn of the session is open (one begun between the
// decision and its append) is void: the folds that hold turns ignore it
// (the engine's, [World.FoldSession], the session_selection projection);
// [EvolveSession] itself always empties the session.
func PruneStale(session string, activeAt int64, running bool, now, pruneAfterMs int64) []events.Payload {
	if session == "" || pruneAfterMs <= 0 || activeAt <= 0 || running || activeAt >= now-pruneAfterMs {
		return nil
	}
	return []events.Payload{events.SessionPruned{Session: session, Reason: PruneReasonStale, LastActiveAt: activeAt, PruneAfterMs: pruneAfterMs}}
}
