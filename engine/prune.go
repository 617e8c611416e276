package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Session maintenance (OpenClaw `session.maintenance`, pruneStaleEntries):
// a session idle for longer than the maintenance age, with no turn
// running, is pruned — one SessionPruned, stored under the session's own
// subject and guarded by it, so a command on the session stored since the
// decision makes it decide again (and keep the session). The fold then
// drops everything it held for the session (dropSession): the engine's
// memory is bounded by the sessions active within the age, not by the
// ledger's length.

// DefaultPruneAfter is OpenClaw's session.maintenance.pruneAfter default:
// 30 days.
const DefaultPruneAfter = 30 * 24 * time.Hour

// DefaultPruneWorkers is how many sessions [Engine.PruneSessions] prunes
// at once by default: each prune is one append, and appends of different
// sessions do not contend.
const DefaultPruneWorkers = 8

// PruneOptions are the inputs of one [Engine.PruneSessions] run.
type PruneOptions struct {
	// After is the maintenance age (pruneAfter): a session with no
	// activity for longer is pruned. It must be at least [MinPruneAfter].
	After time.Duration
	// DryRun lists the sessions that would be pruned and appends nothing.
	DryRun bool
	// Limit bounds how many sessions this run prunes, the oldest first
	// (0 = all): a maintenance tick spreads a first cleanup of a long
	// ledger over several runs.
	Limit int
	// Workers is how many prunes run at once (0 = DefaultPruneWorkers).
	Workers int
}

// PrunedSession is one session a run pruned (or, in a dry run, would).
type PrunedSession struct {
	Session      string    `json:"session"`
	LastActiveAt time.Time `json:"last_active_at"`
	// Seq is the stream sequence of its SessionPruned (0 in a dry run).
	Seq uint64 `json:"seq,omitempty"`
}

// PruneReport is what one [Engine.PruneSessions] run found and did.
type PruneReport struct {
	Agent string `json:"agent"`
	// Now is the decision time; Cutoff the activity time a session must
	// be older than (Now − After).
	Now    time.Time `json:"now"`
	Cutoff time.Time `json:"cutoff"`
	DryRun bool      `json:"dry_run,omitempty"`
	// Sessions is how many sessions the engine held before the run;
	// Running how many of the stale ones were kept for a running turn.
	Sessions int `json:"sessions"`
	Running  int `json:"running"`
	// OldKeys counts the idle sessions never pruned because an earlier
	// build stored their key under older id rules: once pruned, a new
	// command could not name it again.
	OldKeys int `json:"old_keys"`
	// Pruned lists the sessions pruned (in a dry run those that would
	// be), longest idle first; Kept counts the listed
	// ones kept: active again by the time their prune was decided, or
	// with a turn begun while it was appended (the prune is then void).
	Pruned []PrunedSession `json:"pruned"`
	Kept   int             `json:"kept"`
	// Elsewhere counts the listed sessions another writer (a maintenance
	// run on another instance) pruned first; Unsettled the prunes cut
	// short in flight when the run was stopped, which may be stored (a
	// later run settles them).
	Elsewhere int `json:"elsewhere"`
	Unsettled int `json:"unsettled"`
	// Remaining is how many stale sessions Limit left for a later run.
	Remaining int `json:"remaining"`
}

// PruneSessions runs session maintenance once at the engine clock's now:
// it syncs to the stream's end, lists the sessions idle for longer than
// opt.After (a session's activity is the time of its last event or of
// the last event of one of its turns), keeps those with a running turn,
// and prunes the others, oldest activity first — each its own decision
// ([policy.PruneStale]) taken again on the state at its append, so a
// session active since the listing is kept. Sessions are pruned
// opt.Workers at a time; the first error stops the run and is returned
// with the report of what was done.
func (e *Engine) PruneSessions(ctx context.Context, opt PruneOptions) (*PruneReport, error) {
	if opt.After < MinPruneAfter {
		return nil, fmt.Errorf("%w: the maintenance age must be at least %s, got %s", ErrBadRequest, MinPruneAfter, opt.After)
	}
	if opt.Limit < 0 {
		return nil, fmt.Errorf("%w: limit %d is negative", ErrBadRequest, opt.Limit)
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	now := e.opt.clock.Now()
	afterMs := opt.After.Milliseconds()
	nowMs := events.Millis(now)
	rep := &PruneReport{Agent: e.agent, Now: time.UnixMilli(nowMs).UTC(), Cutoff: time.UnixMilli(nowMs - afterMs).UTC(), DryRun: opt.DryRun}
	stale := e.st.staleSessions(nowMs, afterMs, rep)
	if opt.Limit > 0 && len(stale) > opt.Limit {
		rep.Remaining = len(stale) - opt.Limit
		stale = stale[:opt.Limit]
	}
	if opt.DryRun {
		rep.Pruned = append([]PrunedSession{}, stale...)
		return rep, nil
	}
	if opt.Limit == 0 && len(stale) > 1 {
		// Every listed session is taken, so the order only decides who
		// meets whom: runs on several instances start at different
		// places instead of colliding on every session. Which writer
		// prunes a session is not a decision input.
		k := rand.IntN(len(stale))
		stale = append(stale[k:len(stale):len(stale)], stale[:k]...)
	}
	rep.Pruned = make([]PrunedSession, 0, len(stale))
	err := e.pruneEach(ctx, now, afterMs, stale, opt.Workers, rep)
	sortIdle(rep.Pruned)
	return rep, err
}

// pruneEach prunes the sessions listed, workers at a time, into rep.
func (e *Engine) pruneEach(parent context.Context, now time.Time, afterMs int64, stale []PrunedSession, workers int, rep *PruneReport) error {
	if workers <= 0 {
		workers = DefaultPruneWorkers
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  = make(chan PrunedSession)
	)
	for range min(workers, max(len(stale), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				if ctx.Err() != nil {
					continue // stopped: take no more
				}
				seq, gone, err := e.pruneOne(ctx, now, afterMs, c.Session)
				mu.Lock()
				switch {
				case err != nil && ctx.Err() != nil:
					rep.Unsettled++
					if first == nil {
						first = fmt.Errorf("engine: prune session %q of agent %q: %w", c.Session, e.agent, err)
					}
				case err != nil:
					if first == nil {
						first = fmt.Errorf("engine: prune session %q of agent %q: %w", c.Session, e.agent, err)
						cancel()
					}
				case gone:
					rep.Elsewhere++
				case seq == 0:
					rep.Kept++
				default:
					c.Seq = seq
					rep.Pruned = append(rep.Pruned, c)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, c := range stale {
		select {
		case next <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if parent.Err() != nil {
		// Stopped from outside (a shutdown, Ctrl-C): what was pruned
		// stays pruned.
		first = fmt.Errorf("engine: session maintenance of agent %q stopped after %d of %d sessions (%d in flight, possibly stored): %w",
			e.agent, len(rep.Pruned)+rep.Kept+rep.Elsewhere, len(stale), rep.Unsettled, parent.Err())
	}
	return first
}

// pruneOne decides and appends the prune of one session at now: the
// prune's sequence, or 0 when the session was kept — gone when another
// writer had pruned it already.
func (e *Engine) pruneOne(ctx context.Context, now time.Time, afterMs int64, session string) (seq uint64, gone bool, err error) {
	nowMs := events.Millis(now)
	_, evs, err := e.commit(ctx, now, home{agg: events.AggSession, key: session}, "", func() (policy.Decision, error) {
		v := e.st.sessions[session]
		if gone = v == nil; gone {
			return policy.Decision{}, nil
		}
		return policy.Decision{Events: policy.PruneStale(session, v.activeAt, e.st.hasOpenTurn(session), nowMs, afterMs)}, nil
	})
	if err != nil || len(evs) == 0 {
		return 0, gone, err
	}
	e.st.mu.RLock()
	void := e.st.sessions[session] != nil
	e.st.mu.RUnlock()
	if void {
		// A turn of the session was begun between the decision and the
		// append: the fold kept the session (FoldSession).
		return 0, false, nil
	}
	return evs[0].Seq, false, nil
}

// staleSessions lists the sessions idle since before nowMs−afterMs with
// no running turn, oldest activity first (then by key), and counts into
// rep the sessions held and the stale ones kept for a running turn.
func (s *state) staleSessions(nowMs, afterMs int64, rep *PruneReport) []PrunedSession {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rep.Sessions = len(s.sessions)
	var out []PrunedSession
	for k, v := range s.sessions {
		if policy.PruneStale(k, v.activeAt, false, nowMs, afterMs) == nil {
			continue
		}
		if s.open[k] > 0 {
			rep.Running++
			continue
		}
		if ValidateKey(events.AggSession, k) != nil {
			rep.OldKeys++
			continue
		}
		out = append(out, PrunedSession{Session: k, LastActiveAt: time.UnixMilli(v.activeAt).UTC()})
	}
	sortIdle(out)
	return out
}

// sortIdle orders sessions longest idle first, then by key.
func sortIdle(ps []PrunedSession) {
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].LastActiveAt.Equal(ps[j].LastActiveAt) {
			return ps[i].LastActiveAt.Before(ps[j].LastActiveAt)
		}
		return ps[i].Session < ps[j].Session
	})
}

// hasOpenTurn reports whether a turn of session is running or waiting.
// Call with mu held.
func (s *state) hasOpenTurn(session string) bool { return s.open[session] > 0 }

// noteActivity ages the session an event of the agent concerns: a
// session event (other than its prune) or an event of one of its turns
// moves the session's last activity to the event's time.
func (s *state) noteActivity(ev *events.Event) {
	if ev.Agent != s.agent {
		return
	}
	var session string
	switch ev.Aggregate {
	case events.AggSession:
		if _, pruned := ev.Data.(events.SessionPruned); pruned {
			return
		}
		session = ev.Key
	case events.AggTurn:
		session = s.turns[ev.Key].Session
	}
	if session == "" {
		return
	}
	v := s.session(session)
	v.activeAt = max(v.activeAt, events.Millis(ev.At))
	if ev.Aggregate == events.AggSession {
		v.ownAt = max(v.ownAt, events.Millis(ev.At))
	}
}

// dropSession forgets a pruned session: its folded state, the inputs its
// turns left (skip marks, the auto-override probe time) and its subject's
// last sequence. A later command on the session guards its append with
// no sequence known, conflicts once and takes the subject's last
// sequence from the store (commit's awaitWinner).
func (s *state) dropSession(key string) {
	if _, ok := s.sessions[key]; !ok {
		return
	}
	delete(s.sessions, key)
	if subj, err := events.Subject(s.agent, events.AggSession, key); err == nil {
		delete(s.subjectSeq, subj)
	}
	s.pruned++
	// A Go map keeps the table it grew to after its entries are
	// deleted: once more sessions were dropped since the last shrink
	// than are held (a first cleanup of a long ledger), both maps are
	// copied to tables of their present size. Amortised O(1) a prune.
	s.dropped++
	if s.dropped >= shrinkAfter && s.dropped > uint64(len(s.sessions)) {
		s.sessions = shrunk(s.sessions)
		s.subjectSeq = shrunk(s.subjectSeq)
		s.dropped = 0
	}
}

// shrinkAfter is the fewest drops after which the session maps are
// copied to smaller tables (dropSession).
const shrinkAfter = 1024

// shrunk copies m into a map allocated for its present size.
func shrunk[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// idleBeginGuard is the guard of a turn's start stored under the turn's
// subject (a start that writes no session state) when its session holds
// state stored under its own subject (a selection, a pin, the notice
// state: what a prune removes) and has had no session event for
// [beginGuardIdle] or more: the session's subject, which a prune is
// stored under. A start decided on a state without a prune of its session
// and sent after that prune was stored then conflicts, and is decided
// again on the pruned session, instead of being stored after the prune
// with the selection the prune removed — so every later turn reads what
// the stream says the session holds at its place.
//
// The quiet is measured from session events only, which a prune's guard
// orders: a prune stored after a session event was decided on a state
// holding it, so it is not stored within the maintenance age (at least
// [MinPruneAfter]) of it, and a start within beginGuardIdle of it cannot
// race one. Turn events are not ordered by the prune's guard (a turn
// begun and ended while a prune was in flight), so they do not count.
// A start soon after a session event keeps its turn's guard: concurrent
// turns of a session writing notices or pins do not make each other's
// starts conflict. A session the state does not hold, or holds no
// subject sequence for (new, or pruned and used since by turns alone),
// has no selection or pin a prune could take from the start, and its
// start would otherwise conflict once every time (the pruned subject's
// sequence is not kept). Call with the state's read lock held.
func (e *Engine) idleBeginGuard(h home, ps []events.Payload) string {
	if h.agg != events.AggTurn {
		return ""
	}
	for _, p := range ps {
		ts, ok := p.(events.TurnStarted)
		if !ok || ts.Session == "" {
			continue
		}
		v := e.st.sessions[ts.Session]
		if v == nil || ts.StartedAt-v.ownAt < beginGuardIdle.Milliseconds() {
			return ""
		}
		subject, err := events.Subject(e.agent, events.AggSession, ts.Session)
		if err != nil || e.st.subjectSeq[subject] == 0 {
			return ""
		}
		return subject
	}
	return ""
}

// beginGuardIdle is how long a session must have had no session event
// for its turns' starts to be guarded by its subject (idleBeginGuard).
const beginGuardIdle = 10 * time.Second

// MinPruneAfter is the shortest maintenance age [Engine.PruneSessions]
// takes: well past beginGuardIdle, so that a start racing a prune is
// ordered against it (idleBeginGuard) even between instances whose
// clocks differ by tens of seconds.
const MinPruneAfter = time.Minute
