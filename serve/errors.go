package serve

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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
	// Allow, on a 405, is sent as the Allow header: the methods the path
	// takes.
	Allow string
}

func (e *APIError) Error() string { return e.Code + ": " + e.Detail }

func apiErr(status int, code, format string, args ...any) *APIError {
	return &APIError{Status: status, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// maxDetail bounds a detail answered, in bytes: a refusal that quotes
// the value it refuses (a 900 KB chat, a model name) names it, it does not
// echo it back whole.
const maxDetail = 1024

// clipDetail is d within about maxDetail bytes: its head and its tail (a
// detail quotes the value first and says what is wrong after it), cut on
// UTF-8 boundaries, with how much was left out between them.
func clipDetail(d string) string {
	if len(d) <= maxDetail {
		return d
	}
	head, tail := maxDetail*2/3, len(d)-maxDetail/4
	for head > 0 && !utf8.RuneStart(d[head]) {
		head--
	}
	for tail < len(d) && !utf8.RuneStart(d[tail]) {
		tail++
	}
	return fmt.Sprintf("%s… (%d bytes left out) …%s", d[:head], tail-head, d[tail:])
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
	CodeBeginMismatch     = "begin_mismatch"
	CodeTurnExists        = "turn_exists"
	CodeAmbiguousTurn     = "ambiguous_turn"
	CodeWaitNotOver       = "wait_not_over"
	CodeNoConfig          = "no_config"
	CodeUnknownProfile    = "unknown_profile"
	CodeContention        = "contention"
	CodeUnavailable       = "unavailable"
	CodeInternal          = "internal"
	// CodeReadOnly (403): `fledger view` records nothing; only reads and
	// POST /v1/what-if are taken.
	CodeReadOnly = "read_only"
	// CodeCrossOrigin: a non-safe request a browser sent from a page of
	// another origin (403).
	CodeCrossOrigin = "cross_origin"
)

// toAPI maps an engine error to the client's answer: an *APIError as it
// is, else the answer of the first row of [errorTable] the error matches.
// ok is false for an internal error (the caller logs it and answers 500).
func toAPI(err error) (*APIError, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae, true
	}
	for _, c := range errorTable {
		if c.match(err) {
			return c.answer(err), true
		}
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

// unavailableDetail is the detail of a store outage that recorded nothing.
const unavailableDetail = "the event store did not answer (no stream leader, or the NATS server is unreachable): nothing was recorded; retry the request"

// refineUnavailable adjusts the answer to a store outage (503 with
// Retry-After): when the store did not confirm a write it says the step may
// be recorded, so a gateway knows to re-send rather than give up.
func refineUnavailable(err error, e *APIError) {
	if errors.Is(err, events.ErrConsumerLimit) {
		e.Detail = "the NATS server refused a read: " + events.ErrConsumerLimit.Error() + "; nothing was recorded; retry the request"
		return
	}
	var ue *events.UnavailableError
	if errors.As(err, &ue) && ue.Outcome == events.OutcomeUnknown {
		e.Recorded = RecordedUnknown
		e.Detail = fmt.Sprintf("the event store did not confirm the write within %v (no stream leader, the NATS server unreachable, or not storing — its disk full, say; GET /healthz): it may be recorded; re-send the same request — it is idempotent and is recorded once",
			ue.Waited.Round(time.Second))
	}
}
