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
package projections
