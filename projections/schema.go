package projections

// The tables themselves are declared one a file ([table], register):
// projection_meta and checkpoint in checkpoint.go, usage_stats,
// session_selection (sessions.go), turns, fallback_decisions
// (decisions.go), skipped_events (skipped.go), quarantined
// (quarantine.go), profile_windows and agent_spans.
// TestSchema_IsVersion6 pins the schema they generate to
// testdata/schema_v6.sql.

// SchemaVersion is the version of the projection tables this code writes.
// A database with a lower version is rebuilt from sequence 1 when opened
// (with a log line); one with a higher version is refused with
// [ErrNewerSchema]. Bump it whenever a table, a column or the meaning of
// a value changes.
//
// Version 2: the database is bound to the ledger it is built from
// (projection_meta ledger_stream, ledger_created, ledger_first_id; see
// [DB.Bind]). A version 1 database carries no fingerprint, may hold a mix
// of two ledgers, and is rebuilt.
//
// Version 3: the quarantined table (stored messages that are not fledger
// commits, and sequences missing from the stream).
//
// Version 4: usage_stats gains the subscription block (blockedUntil,
// blockedReason, blockedSource, blockedModel; issue 17). A version 3
// database is rebuilt from sequence 1, which fills them from the events.
//
// Version 5: the incident viewer's timeline is read from the projections
// (issue 20: its cost must not grow with the ledger's age): the
// profile_windows table (every cooldown, disable and provider block,
// [ProfileTrack]), the agent_spans table (each agent's first and last
// event times; it folds every event type), and turns gains startSeq,
// openedAt (the TurnStarted commit's sequence and time), class
// ([Classify]) and the index turns_agent_opened. A version 4
// database is rebuilt from sequence 1, which fills them from the events.
//
// Version 6: turns is a rowid table (it was WITHOUT ROWID; see [turns]):
// same columns, indexes and rows, cheaper inserts of random turn ids. A
// version 5 database is rebuilt from sequence 1.
//
// Still version 6: a SessionPruned deletes the session's
// session_selection row ([sessionSelection]). Ledgers written before
// session maintenance carry none, so their projections are unchanged; a
// fledger older than the type quarantines a SessionPruned commit, and
// `stats --rebuild` refolds it, as for any newer event type. Nor does a
// prune folded while a turn of its session is open being void (as in the
// engine): no released build wrote a SessionPruned, so no database holds
// a row such a prune deleted.
const SchemaVersion = 6
