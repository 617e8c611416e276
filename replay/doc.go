// Package replay answers an operator's questions after an incident, from
// the event stream alone (design "Replay"):
//
//   - [Rebuild] folds every projection into a fresh database up to a
//     stream sequence or a moment ([SeqAt]);
//   - [Verify] re-runs the pure deciders of commands/policy over the
//     recorded inputs (config in force, session and profile state, the
//     provider outcomes, the decision time) and compares what they decide
//     with what was recorded, event by event;
//   - [Explain] and [ExplainTimeline] tell one turn, or a session's turns
//     over a time range, in plain words;
//   - [WhatIf] re-decides recorded turns under another config, reusing
//     the recorded provider outcomes and reporting any call that was never
//     made in reality as unknown.
//
// Everything here reads the stream through a [Source] and writes nothing
// to it. State is folded with engine's [engine.Fold], the very
// code the engine decides on, so the inputs replay rebuilds are the inputs
// the engine had.
package replay
