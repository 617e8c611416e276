package events

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnavailable: the store could not reach the stream within the store's
// retry time ([WithRetryUnknown]): the server is unreachable, the stream
// has no leader (an election in a cluster), or it did not answer. The
// returned error is an *[UnavailableError], which says whether an append
// may have been stored.
var ErrUnavailable = errors.New("events: stream unavailable")

// Outcome says what is known of an operation that failed with
// [ErrUnavailable].
type Outcome string

const (
	// NotStored: nothing was written (a read, or an append no server
	// received). Deciding again is safe.
	NotStored Outcome = "not_stored"
	// OutcomeUnknown: an append was sent and not answered; it may be
	// stored. Re-send the same commit (same events, same message id): it
	// is stored once. Do not decide again.
	OutcomeUnknown Outcome = "unknown"
)

// UnavailableError reports an operation the stream did not answer within
// the retry time. errors.Is(err, ErrUnavailable) is true; Unwrap gives
// the last NATS error.
type UnavailableError struct {
	// Op is "append", a read ("last sequence", "read", "open"), or "fold"
	// (an engine waiting for its consumer to reach a sequence).
	Op string
	// Subject is the append's subject or the read's filter ("" = stream).
	Subject string
	// Outcome is [NotStored] or [OutcomeUnknown] (appends only).
	Outcome Outcome
	// Attempts is how many times the operation was sent; Waited how long
	// the store tried.
	Attempts int
	Waited   time.Duration
	Err      error
}

// Error names the operation, what is known of it, and the last cause.
func (e *UnavailableError) Error() string {
	what := "nothing was stored"
	switch {
	case e.Outcome == OutcomeUnknown:
		what = "it may have been stored: re-send the same commit"
	case e.Op != "append":
		what = "nothing was written"
	}
	where := e.Subject
	if where == "" {
		where = StreamName
	}
	return fmt.Sprintf("events: %s on %s: stream unavailable after %d attempt(s) in %v (%s): %v",
		e.Op, where, e.Attempts, e.Waited.Round(time.Millisecond), what, e.Err)
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the last cause.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Defaults of the retry of operations the stream does not answer.
const (
	// DefaultRetryUnknown is how long an operation the stream does not
	// answer is retried: long enough for a stream leader election in a
	// 3-node cluster (measured 4.5–6.3 s with nats-server's defaults).
	DefaultRetryUnknown = 15 * time.Second
	// DefaultAttemptTimeout bounds one attempt inside that time, so a
	// request lost during an election is re-sent soon after a new leader
	// is elected, not when the whole timeout has passed.
	DefaultAttemptTimeout = 2 * time.Second
)

// JetStream API error codes the store tells apart that the jetstream
// package does not export (its own are used where it does: the
// jetstream.JSErrCode constants).
const (
	// codeDuplicateInProcess (10158, "duplicate message id is in
	// process"): a replicated stream refuses a message whose id another
	// message still being proposed carries.
	codeDuplicateInProcess jetstream.ErrorCode = 10158
	// codeNoPeers (10005): no suitable peers for placement — a cluster
	// that does not (yet) have enough JetStream servers online for the
	// replicas.
	codeNoPeers jetstream.ErrorCode = 10005
	// codeReplicasNotClustered (10074): replicas > 1 on a server that is
	// not in a cluster.
	codeReplicasNotClustered jetstream.ErrorCode = 10074
)

// sendKind says what a failed attempt means.
type sendKind int

const (
	sendFinal   sendKind = iota // an answer (success or a definite error)
	sendNotSent                 // no server received it: retry
	sendUnknown                 // sent, not answered: retry, outcome unknown
)

// classifySend sorts an attempt's error. A deadline counts as an
// unanswered request: retryingEach gives each attempt its own deadline and
// stops when the caller's context has ended.
func classifySend(err error) sendKind {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return sendFinal
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrConnectionReconnecting),
		errors.Is(err, nats.ErrDisconnected):
		return sendNotSent
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout), errors.Is(err, jetstream.ErrAsyncPublishTimeout):
		return sendUnknown
	case errors.As(err, &apiErr) && apiErr.ErrorCode == codeDuplicateInProcess:
		// A replicated stream is still storing a message with this id
		// (our earlier send, or another writer's of the same step): ask
		// again in a moment, when it is stored and this one a duplicate.
		return sendUnknown
	case errors.As(err, &apiErr) && apiErr.ErrorCode == codeNoPeers:
		// A cluster starting, or with nodes down: not enough JetStream
		// peers online for the replicas yet.
		return sendNotSent
	case errors.As(err, &apiErr) && apiErr.Code == 503:
		// "JetStream system temporarily unavailable", a stream offline
		// or leaderless: the request was refused, nothing stored.
		return sendNotSent
	}
	return sendFinal
}

// retrying runs fn until it gets an answer, the retry time runs out or ctx
// ends. Each attempt gets at most the attempt timeout (and what is left of
// ctx). A failure that is not an unanswered or unsent request is returned
// as it is; otherwise the error is an *UnavailableError whose Outcome is
// unknown when an append was sent and not answered.
func (s *store) retrying(ctx context.Context, op, subject string, fn func(ctx context.Context) error) error {
	return s.retryingEach(ctx, op, subject, s.attemptTimeout(), fn)
}

// retryingEach is retrying with each attempt bounded by attempt (0 = by
// ctx only: for reads whose every wait is bounded on its own). The server
// refusing a subject of the stream (or an append's subject) while it runs
// ends it at once with a *[PermissionError]: the server drops a request
// the user may not publish and never answers it, so the wait is a
// refusal, not an outage. Only such a refusal counts: one reported before,
// or of another subject, leaves a timeout a timeout (retried, then
// ErrUnavailable).
func (s *store) retryingEach(ctx context.Context, op, subject string, attempt time.Duration, fn func(ctx context.Context) error) error {
	publish := ""
	if op == "append" {
		publish = SubjectPrefix + ".>"
	}
	return s.retryingConcerning(ctx, op, subject, attempt, jsConcerns(StreamName, publish), fn)
}

// retryingConcerning is retryingEach for an operation whose subjects
// concerns accepts (another stream's: the snapshot object store's).
func (s *store) retryingConcerning(ctx context.Context, op, subject string, attempt time.Duration, concerns func(string) bool, fn func(ctx context.Context) error) error {
	return s.refused.during(ctx, op, concerns, func(ctx context.Context) error {
		return s.retryAttempts(ctx, op, subject, attempt, fn)
	})
}

// retryAttempts is retryingEach's loop.
func (s *store) retryAttempts(ctx context.Context, op, subject string, attempt time.Duration, fn func(ctx context.Context) error) error {
	start := time.Now()
	budget := s.cfg.retryUnknown
	attempts := 0
	unknown := false
	backoff := 20 * time.Millisecond
	for {
		attempts++
		actx, cancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, cancel = context.WithTimeout(ctx, attempt)
		}
		err := fn(actx)
		cancel()
		kind := classifySend(err)
		if kind == sendFinal || s.isClosed() {
			return err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			kind = sendUnknown // the attempt's own deadline
		}
		if kind == sendUnknown {
			unknown = true
		}
		waited := time.Since(start)
		if ctx.Err() != nil || waited+backoff >= budget {
			out := NotStored
			if unknown && op == "append" {
				out = OutcomeUnknown
			}
			return &UnavailableError{Op: op, Subject: subject, Outcome: out, Attempts: attempts, Waited: waited, Err: err}
		}
		// Jittered, so a fleet of writers does not re-send in step.
		d := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-time.After(d):
		case <-ctx.Done():
		case <-s.closed:
			return ErrClosed
		}
		backoff = min(2*backoff, 500*time.Millisecond)
		if op == "append" {
			// Not resent onto a stream created since this store opened
			// its own (the stream removed and made again while the
			// append waited: a rotation): it was decided on the old one.
			if err := s.replacedNow(ctx); err != nil {
				return err
			}
		}
	}
}

// replacedNow asks the server for the stream and returns [store.replaced]'s
// error when it is not the one this store opened; nil when it is, or when
// the server does not say (an outage: the resend goes on).
func (s *store) replacedNow(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, s.attemptTimeout())
	defer cancel()
	info, err := s.stream.Info(actx)
	if err != nil {
		return nil
	}
	return s.replaced(actx, info)
}

// attemptTimeout is one attempt's bound: the attempt timeout, at most the
// store's timeout; the whole timeout when nothing is retried.
func (s *store) attemptTimeout() time.Duration {
	if s.cfg.retryUnknown == 0 {
		return s.cfg.timeout
	}
	return min(s.cfg.attemptTimeout, s.cfg.timeout)
}
