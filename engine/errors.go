package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fledger/fledger/events"
)

// Sentinel errors.
var (
	// ErrNoConfig: the agent has no ConfigApplied yet (see
	// [Engine.ApplyConfig]), or the turn's config is unknown.
	ErrNoConfig = errors.New("engine: no config applied for this agent")
	// ErrConflictRetries: an append kept conflicting with other writers
	// after the configured number of reloads ([WithConflictRetries]).
	ErrConflictRetries = errors.New("engine: too many append conflicts")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("engine: closed")
	// ErrBadRequest: a TurnRequest or command is missing a field or has a
	// bad value.
	ErrBadRequest = errors.New("engine: bad request")
	// ErrMultiProfileDecision: a decision touched more than one profile (a
	// policy bug: the consistency design stores a decision under the one
	// profile it guards).
	ErrMultiProfileDecision = errors.New("engine: a decision touched more than one profile")
)

// ExhaustedError is returned by [Engine.RunTurn] when every candidate
// failed (reference §7 "Failure summary"). errors.As-able.
type ExhaustedError struct {
	// TurnID names the turn.
	TurnID string
	// Summary is what the user sees: "All models failed (N): p/m: err
	// (reason) | …", or with a single attempt that attempt's own redacted
	// error text (RawError true).
	Summary  string
	RawError bool
	// Attempts are the pass's failed and skipped candidates.
	Attempts []events.ExhaustedAttempt
	// SoonestCooldownExpiry is the model-aware soonest cooldown expiry,
	// Unix ms UTC (0 = unknown).
	SoonestCooldownExpiry int64
}

func (e *ExhaustedError) Error() string { return e.Summary }

// StoppedError is returned by [Engine.RunTurn] when the turn stopped
// without exhausting the chain: Disposition compaction (context overflow:
// compact and retry), abort, refusal, coordination, or failover: the
// provider's error (Message) surfaced as it is, for Reason format (a
// format error is terminal unless failover.formatAdvances) or unknown or
// unclassified on the last candidate (rule revision 2; revision 1: unknown
// only). errors.As-able.
type StoppedError struct {
	TurnID      string
	Disposition string
	Reason      string
	// Message is the provider's redacted message.
	Message string
}

func (e *StoppedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "turn stopped (%s, %s)", e.Disposition, e.Reason)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// SwitchError is returned by [Engine.RunTurn] when a user selected a
// model outside the turn's candidate chain while it ran (a pending live
// switch, rule revision 3; OpenClaw's LiveSessionModelSwitchError): the
// turn ended (TurnSwitched) and its owner runs the same turn again as a
// new turn, which starts from the session's selection, Model (pinned to
// ProfileID when the selection named one). errors.As-able.
type SwitchError struct {
	TurnID    string
	Session   string
	Model     events.ModelRef
	ProfileID string
	// Message is "LiveSessionModelSwitchError: … was selected during the
	// run; it is not in the candidate chain".
	Message string
}

func (e *SwitchError) Error() string { return "turn switched: " + e.Message }

// ConflictRetriesError is ErrConflictRetries with the subject that kept
// conflicting.
type ConflictRetriesError struct {
	Subject string
	Tries   int
	Last    error
}

func (e *ConflictRetriesError) Error() string {
	return fmt.Sprintf("engine: %d append conflicts on %s: %v", e.Tries, e.Subject, e.Last)
}

// Is makes errors.Is(err, ErrConflictRetries) true.
func (e *ConflictRetriesError) Is(target error) bool { return target == ErrConflictRetries }

// Unwrap returns the last conflict.
func (e *ConflictRetriesError) Unwrap() error { return e.Last }
