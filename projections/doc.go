// Package projections is fledger's read side: it folds the event stream
// into SQLite tables (usage_stats, session_selection, fallback_decisions,
// turns) with the same evolve functions the deciders use
// ([policy.EvolveProfile], [policy.EvolveSession], [policy.EvolveTurn]),
// so the state a decision saw and the state a projection shows can never
// disagree.
//
// A [Projector] reads the stream in order from the database's checkpoint
// (the last stream sequence folded) and writes each batch of whole commits
// together with the new checkpoint in one transaction: a crash between or
// inside batches resumes from the checkpoint with nothing lost and nothing
// counted twice. [DB.Dump] writes a canonical dump of every table, and
// [DB.DumpHash] its SHA-256, for determinism checks (rebuild from sequence
// 1 and incremental catch-up must give the same bytes).
//
// Column names are camelCase: OpenClaw's names where it has them
// (usageStats fields, reference §4; model_fallback_decision fields,
// reference §8; session override fields), so exporters can emit rows
// unchanged. Times are Unix milliseconds (UTC) in the database, 0 when
// unset, and RFC 3339 UTC with milliseconds in dumps and JSON. See
// docs/projections.md.
//
// # One table, one file
//
// Each table is a table value declared once, in the file named after it
// (usage_stats.go, sessions.go, turns.go, decisions.go, skipped.go,
// quarantine.go, checkpoint.go), and registered with its place in the
// schema. The declaration holds what used to be spread over the schema,
// the projector's cache, its statements and its flush:
//
//   - the columns with their SQL types, the primary key (the first key
//     columns), WITHOUT ROWID, the indexes: the CREATE TABLE, the DROP,
//     the prepared INSERT/upsert and the read-back SELECT, the dump's
//     row order and time columns, and the queries' column lists are all
//     derived from it (table.go), so a column is named once in Go;
//   - the event types it folds, as catalog payloads (folds);
//   - how it caches and writes its rows during a catch-up (rows):
//     [keyed] for an aggregate table (a row per agent and envelope key,
//     read back on the first event of a key, folded in memory, upserted
//     when changed; a finished turn leaves the cache), [appended] for a
//     row per event, or the table's own cache (skipped_events,
//     quarantined, which the projector feeds rather than the events).
//
// The row type beside it says how one event changes a row (fold, which
// keeps calling the policy evolve functions), its column values in table
// order (values) and where a read-back row goes (dest, loaded).
//
// The generated DDL is pinned: TestSchema_IsVersion5 checks that
// sqlite_master of a database created now equals that of
// testdata/schema_v5.sql, root pages included, and a database of
// version 4 (testdata/schema_v4.sql) is rebuilt when opened and catches
// up to the same dump as a fresh rebuild.
//
// Column values stay positional slices (values, dest) rather than a
// closure per column: a flush writes every changed row, and per-column
// indirections would cost the rebuild (docs/performance.md) for little;
// TestTables_RowsMatchTheirColumns checks their lengths against the
// columns and the exact-rows, dump and golden tests their order.
//
// # Event types
//
// The types the projector knows are not listed by hand: they are the
// union of the tables' folds and ignoredEvents (the catalog types no
// table folds, each with its reason), computed when the package
// initialises ([eventTables]) and used to route each event to the tables
// that fold it. TestEventTypes_EveryCatalogTypeIsHandled fails for any
// type of [events.Catalog] that is neither folded nor ignored, so a new
// event type cannot silently become an [UnknownTypeError] in production.
//
// # A catch-up
//
// [Projector.CatchUp] prepares the tables' statements and runs attempts
// (a concurrent writer that moves the checkpoint restarts one). An
// attempt (attempt.go) takes each read result in turn: an event joins its
// commit, a complete commit is folded into every table's cache
// (cache.go) and a full batch flushed; an undecodable message or a gap is
// quarantined; any other error flushes the complete commits and ends.
// A flush (flush.go) writes every table's changed rows and the checkpoint
// in one transaction, in table order.
package projections
