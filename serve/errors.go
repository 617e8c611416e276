package serve

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// APIError is an error answered to a client: an HTTP status, a stable
// code and a detail in words. It never carries a stack trace or an
// internal error's text for a 5xx (those are logged).
type APIError struct {
	Status int
	Code   string
	Detail string
	// RetryAfterMs, when > 0, is sent as Retry-After (seconds, rounded up).
	RetryAfterMs int64
	// Recorded is ErrorBody.Recorded.
	Recorded string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Detail }

func apiErr(status int, code, format string, args ...any) *APIError {
	return &APIError{Status: status, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// Error codes (ErrorBody.Error), one per kind of refusal.
const (
	CodeInvalidJSON       = "invalid_json"
	CodeInvalidRequest    = "invalid_request"
	CodeBodyTooLarge      = "body_too_large"
	CodeUnauthorized      = "unauthorized"
	CodeNotFound          = "not_found"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeUnknownAgent      = "unknown_agent"
	CodeUnknownTurn       = "unknown_turn"
	CodeAttemptNotPlanned = "attempt_not_planned"
	CodeOutcomeMismatch   = "outcome_mismatch"
	CodeTurnExists        = "turn_exists"
	CodeWaitNotOver       = "wait_not_over"
	CodeNoConfig          = "no_config"
	CodeUnknownProfile    = "unknown_profile"
	CodeContention        = "contention"
	CodeUnavailable       = "unavailable"
	CodeInternal          = "internal"
)

// toAPI maps an engine error to the client's answer; ok is false for an
// internal error (the caller logs it and answers 500).
func toAPI(err error) (*APIError, bool) {
	var ae *APIError
	var wait *engine.WaitNotOverError
	var att *engine.AttemptError
	var noModel *engine.NoModelError
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &noModel):
		return apiErr(http.StatusServiceUnavailable, CodeNoConfig, "%s", noModel.Error()), true
	case errors.As(err, &wait):
		return &APIError{Status: http.StatusTooEarly, Code: CodeWaitNotOver, RetryAfterMs: wait.RemainingMs,
			Detail: "the turn waits " + strconv.FormatInt(wait.RemainingMs, 10) + " ms more (resume_at " + strconv.FormatInt(wait.ResumeAt, 10) + "); resume after that"}, true
	case errors.As(err, &att) && errors.Is(err, engine.ErrAttemptNotPlanned):
		return apiErr(http.StatusConflict, CodeAttemptNotPlanned, "turn %s has started %d attempt(s); attempt %d was never planned: report the attempt of the last call action",
			att.TurnID, att.Planned, att.Attempt), true
	case errors.As(err, &att) && errors.Is(err, engine.ErrOutcomeMismatch):
		return apiErr(http.StatusConflict, CodeOutcomeMismatch, "attempt %d of turn %s was already reported with the other result (ok vs error)", att.Attempt, att.TurnID), true
	case errors.Is(err, engine.ErrUnknownTurn):
		return apiErr(http.StatusNotFound, CodeUnknownTurn, "%s", userDetail(err)), true
	case errors.Is(err, engine.ErrTurnExists):
		return apiErr(http.StatusConflict, CodeTurnExists, "%s", userDetail(err)), true
	case errors.Is(err, engine.ErrNoConfig):
		return apiErr(http.StatusServiceUnavailable, CodeNoConfig, "no config is applied for this agent: start `fledger serve --config FILE` or run `fledger config apply FILE`"), true
	case errors.Is(err, policy.ErrUnknownProfile):
		return apiErr(http.StatusUnprocessableEntity, CodeUnknownProfile, "%s", userDetail(err)), true
	case errors.Is(err, policy.ErrPinProvider), errors.Is(err, policy.ErrBadSource), errors.Is(err, policy.ErrNoModel), errors.Is(err, policy.ErrBadOrder):
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidRequest, "%s", userDetail(err)), true
	case errors.Is(err, engine.ErrBadRequest):
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s", userDetail(err)), true
	case errors.Is(err, engine.ErrConflictRetries):
		return &APIError{Status: http.StatusServiceUnavailable, Code: CodeContention, RetryAfterMs: 100,
			Detail: "too many concurrent writers on the same profile or turn; retry"}, true
	case errors.Is(err, events.ErrUnavailable):
		return unavailable(err), true
	case errors.Is(err, engine.ErrClosed):
		return apiErr(http.StatusServiceUnavailable, CodeUnavailable, "the server is shutting down"), true
	}
	return nil, false
}

// userDetail is err's text without the package prefixes ("engine: bad
// request: ", "policy: ", "events: ") that mean something to a Go caller
// but nothing to a gateway reading the detail.
func userDetail(err error) string {
	msg := err.Error()
	for changed := true; changed; {
		changed = false
		for _, p := range []string{"engine: bad request: ", "engine: ", "policy: ", "events: ", "classify: "} {
			if strings.HasPrefix(msg, p) {
				msg, changed = msg[len(p):], true
			}
		}
	}
	return msg
}

// Recorded values of a 503 unavailable (ErrorBody.Recorded).
const (
	RecordedNo      = "no"
	RecordedUnknown = "unknown"
)

// unavailableRetryMs is the Retry-After of a store outage: about the time
// a 3-node cluster takes to elect a new stream leader.
const unavailableRetryMs = 2000

// unavailable answers a store outage: 503 with Retry-After, saying whether
// the step was recorded, so a gateway knows to re-send rather than give up.
func unavailable(err error) *APIError {
	var ue *events.UnavailableError
	e := &APIError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, RetryAfterMs: unavailableRetryMs, Recorded: RecordedNo,
		Detail: "the event store did not answer (no stream leader, or the NATS server is unreachable): nothing was recorded; retry the request"}
	if errors.As(err, &ue) && ue.Outcome == events.OutcomeUnknown {
		e.Recorded = RecordedUnknown
		e.Detail = fmt.Sprintf("the event store did not confirm the write within %v (no stream leader, or the NATS server is unreachable): it may be recorded; re-send the same request — it is idempotent and is recorded once",
			ue.Waited.Round(time.Second))
	}
	return e
}
