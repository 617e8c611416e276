package serve

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// errorClass is one row of [errorTable]: a class of error and the answer
// it gets.
type errorClass struct {
	// class names the errors the row matches, for tests and logs.
	class string
	// match reports whether err is of the class.
	match func(err error) bool
	// Status, Code, RetryAfterMs and Recorded are the answer's fields.
	Status       int
	Code         string
	RetryAfterMs int64
	Recorded     string
	// detail is the answer's Detail; nil means userDetail(err).
	detail func(err error) string
	// refine, when set, adjusts the answer from the error's values.
	refine func(err error, e *APIError)
}

// answer is c's answer to err.
func (c errorClass) answer(err error) *APIError {
	e := &APIError{Status: c.Status, Code: c.Code, RetryAfterMs: c.RetryAfterMs, Recorded: c.Recorded}
	if c.detail != nil {
		e.Detail = c.detail(err)
	} else {
		e.Detail = userDetail(err)
	}
	if c.refine != nil {
		c.refine(err, e)
	}
	return e
}

// errorTable maps engine, policy and store errors to HTTP answers; the
// first row that matches wins, so a typed error comes before the sentinels
// it wraps.
var errorTable = []errorClass{
	{class: "*engine.NoModelError", match: isA[*engine.NoModelError](nil),
		Status: http.StatusServiceUnavailable, Code: CodeNoConfig,
		detail: with(func(n *engine.NoModelError) string { return n.Error() })},
	{class: "*engine.WaitNotOverError", match: isA[*engine.WaitNotOverError](nil),
		Status: http.StatusTooEarly, Code: CodeWaitNotOver,
		detail: with(func(w *engine.WaitNotOverError) string {
			return "the turn waits " + strconv.FormatInt(w.RemainingMs, 10) + " ms more (resume_at " + strconv.FormatInt(w.ResumeAt, 10) + "); resume after that"
		}),
		refine: func(err error, e *APIError) { e.RetryAfterMs = as[*engine.WaitNotOverError](err).RemainingMs }},
	{class: "*engine.AttemptError + engine.ErrAttemptNotPlanned", match: isA[*engine.AttemptError](engine.ErrAttemptNotPlanned),
		Status: http.StatusConflict, Code: CodeAttemptNotPlanned,
		detail: with(func(a *engine.AttemptError) string {
			return fmt.Sprintf("turn %s has started %d attempt(s); attempt %d was never planned: report the attempt of the last call action", a.TurnID, a.Planned, a.Attempt)
		})},
	{class: "*engine.AttemptError + engine.ErrOutcomeMismatch", match: isA[*engine.AttemptError](engine.ErrOutcomeMismatch),
		Status: http.StatusConflict, Code: CodeOutcomeMismatch,
		detail: with(func(a *engine.AttemptError) string {
			return fmt.Sprintf("attempt %d of turn %s was already reported with another result (ok against an error, or another provider error): the recorded one stands", a.Attempt, a.TurnID)
		})},
	{class: "*engine.BeginMismatchError", match: isA[*engine.BeginMismatchError](nil),
		Status: http.StatusConflict, Code: CodeBeginMismatch,
		detail: with(func(m *engine.BeginMismatchError) string {
			return fmt.Sprintf("turn %s was begun with %s %s; this begin asks %s: a re-sent begin must repeat the original request (a new turn needs a new turn_id)", m.TurnID, m.Field, m.Recorded, m.Requested)
		})},
	{class: "*engine.NoNextStepError", match: isA[*engine.NoNextStepError](nil),
		Status: http.StatusInternalServerError, Code: CodeInternal,
		detail: with(func(n *engine.NoNextStepError) string { return strings.TrimPrefix(n.Error(), "engine: ") })},
	{class: "engine.ErrDecisionPanicked", match: isAny(engine.ErrDecisionPanicked),
		Status: http.StatusInternalServerError, Code: CodeInternal, Recorded: RecordedNo,
		detail: fixed("the decision of this step failed on the turn's recorded state, which no engine writes (a forged or re-sent commit: fledger replay --verify names it); nothing was recorded, and every other turn is served")},
	{class: "engine.ErrUnknownTurn", match: isAny(engine.ErrUnknownTurn),
		Status: http.StatusNotFound, Code: CodeUnknownTurn},
	{class: "engine.ErrTurnExists", match: isAny(engine.ErrTurnExists),
		Status: http.StatusConflict, Code: CodeTurnExists},
	{class: "engine.ErrNoConfig", match: isAny(engine.ErrNoConfig),
		Status: http.StatusServiceUnavailable, Code: CodeNoConfig,
		detail: fixed("no config is applied for this agent: start `fledger serve --config FILE` or run `fledger config apply FILE`")},
	{class: "policy.ErrUnknownProfile", match: isAny(policy.ErrUnknownProfile),
		Status: http.StatusUnprocessableEntity, Code: CodeUnknownProfile},
	{class: "policy.ErrPinProvider | ErrBadSource | ErrNoModel | ErrBadOrder",
		match:  isAny(policy.ErrPinProvider, policy.ErrBadSource, policy.ErrNoModel, policy.ErrBadOrder),
		Status: http.StatusUnprocessableEntity, Code: CodeInvalidRequest},
	{class: "engine.ErrBadRequest", match: isAny(engine.ErrBadRequest),
		Status: http.StatusBadRequest, Code: CodeInvalidRequest},
	{class: "engine.ErrConflictRetries", match: isAny(engine.ErrConflictRetries),
		Status: http.StatusServiceUnavailable, Code: CodeContention, RetryAfterMs: 100,
		detail: fixed("too many concurrent writers on the same profile or turn; retry")},
	{class: "events.ErrUnavailable", match: isAny(events.ErrUnavailable),
		Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfterMs: unavailableRetryMs, Recorded: RecordedNo,
		detail: fixed(unavailableDetail), refine: refineUnavailable},
	{class: "events.ErrStreamGone", match: isAny(events.ErrStreamGone),
		Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
		detail: fixed("the FLEDGER stream is not on the NATS server any more (deleted, or replaced by a rotation while this process ran): restart fledger on the current stream")},
	{class: "*projections.DBError", match: isA[*projections.DBError](nil),
		// The projection database damaged (found by a read, not at open),
		// of a newer schema or of another ledger: the reads of the
		// projections fail until it is rebuilt; turns are not affected.
		Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
		detail: with(func(d *projections.DBError) string {
			cmd := d.Rebuild
			if cmd == "" {
				cmd = projections.RebuildCommand(d.Path)
			}
			return "the projection database cannot be read (" + d.Err.Error() + "): reads of the projections fail until it is rebuilt from the stream — stop serve, run `" + cmd + "`, start it again; turns are not affected"
		})},
	{class: "engine.ErrClosed", match: isAny(engine.ErrClosed),
		Status: http.StatusServiceUnavailable, Code: CodeUnavailable,
		detail: fixed("the server is shutting down")},
}

// isAny matches an error that is any of targets (errors.Is).
func isAny(targets ...error) func(error) bool {
	return func(err error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
}

// isA matches an error whose chain holds a T (errors.As) and, when also is
// not nil, that is also (errors.Is).
func isA[T error](also error) func(error) bool {
	return func(err error) bool {
		var t T
		return errors.As(err, &t) && (also == nil || errors.Is(err, also))
	}
}

// as is the T in err's chain (the zero T when none).
func as[T error](err error) T {
	var t T
	errors.As(err, &t)
	return t
}

// with is a detail built from the T in the error's chain.
func with[T error](f func(T) string) func(error) string {
	return func(err error) string { return f(as[T](err)) }
}

// fixed is a detail that does not depend on the error.
func fixed(s string) func(error) string { return func(error) string { return s } }
