package engine

import (
	"context"
	"errors"
)

// CallRequest is one provider call the engine asks a [Caller] to make.
type CallRequest struct {
	// Provider and Model name the candidate, e.g. "openai" and "gpt-5".
	Provider string
	Model    string
	// ProfileID is the auth profile to use ("" when the provider has no
	// configured profile: use the provider's default credentials).
	ProfileID string
	// Attempt is the 1-based attempt number across the turn.
	Attempt int
	// CandidateIndex is the 0-based chain position; Kind is first | retry
	// | rotation | fallback | probe | chain_retry.
	CandidateIndex int
	Kind           string
	// TurnID and Session name the turn.
	TurnID  string
	Session string
}

// Answer is a successful provider call's result, handed back by
// [Engine.RunTurn] untouched (fledger records only that the call answered).
type Answer struct {
	// Text is the answer text, if the caller wants to return one.
	Text string
	// Value is anything else the caller wants back (a response object).
	Value any
}

// Caller performs provider calls. Call returns the answer, or an error:
// a *classify.ProviderError (structured: status, code, type, message,
// body, headers), any Go error (classified through classify.FromError:
// context deadlines, net errors, TLS errors…), or either wrapped in a
// [*ReplayUnsafeError] when output or a tool call had already started.
// Call must honour ctx.
type Caller interface {
	Call(ctx context.Context, req CallRequest) (Answer, error)
}

// CallerFunc adapts a function to [Caller].
type CallerFunc func(ctx context.Context, req CallRequest) (Answer, error)

// Call calls f.
func (f CallerFunc) Call(ctx context.Context, req CallRequest) (Answer, error) { return f(ctx, req) }

// ReplayUnsafeError wraps a call error after which the attempt may not be
// replayed: assistant output (OutputStarted) or a tool call (ToolStarted)
// had started. The engine then never retries the attempt and turns the
// whole-chain overload retry off for the rest of the turn (POLICY
// "Retries, probes, limits").
type ReplayUnsafeError struct {
	Err           error
	OutputStarted bool
	ToolStarted   bool
}

func (e *ReplayUnsafeError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ReplayUnsafeError) Unwrap() error { return e.Err }

// ToolBatchSettledError wraps a call error of a call that continued the
// transcript after a settled tool batch (every tool call of the batch had
// its result). A transport failure before any output (no HTTP status,
// classified timeout; not a *[ReplayUnsafeError]) is then continued on the
// same call up to twice a turn, the tools not rerun (attempt kind
// transport_recovery, rule revision 3), and not counted against the
// profile's health.
type ToolBatchSettledError struct {
	Err error
}

func (e *ToolBatchSettledError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ToolBatchSettledError) Unwrap() error { return e.Err }

// toolBatchSettled reports whether err says its call followed a settled
// tool batch.
func toolBatchSettled(err error) bool {
	var tb *ToolBatchSettledError
	return errors.As(err, &tb)
}
