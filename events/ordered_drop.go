package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// dropOrdered deletes, in the background, the server's consumer behind an
// ordered consumer whose reader has stopped. The client's Stop leaves it
// to the server, which deletes it after its inactivity threshold (five
// minutes), and a stream holds at most 1,000 consumers unless the server
// is configured otherwise: a gateway reading finished turns back a few
// times a second would otherwise reach that limit within minutes, after
// which every new read, follow and engine start fails until the leftovers
// expire. A consumer not created yet, or one the client is recreating,
// has nothing to delete or is deleted by the client itself. Failures are
// ignored: the threshold remains the backstop (a process killed mid-read
// leaves its consumers to it). Close waits for the deletes in flight.
func (s *store) dropOrdered(cons jetstream.Consumer) { s.stopAndDrop(nil, cons) }

// stopAndDrop runs stop (the client's Stop of an ordered consumer's
// iteration, which may wait while the client recreates the consumer), then
// dropOrdered's delete, on a goroutine Close waits for (a bounded time).
func (s *store) stopAndDrop(stop func(), cons jetstream.Consumer) {
	s.drops.mu.Lock()
	s.drops.n++
	s.drops.mu.Unlock()
	go func() {
		defer func() {
			s.drops.mu.Lock()
			s.drops.n--
			s.drops.mu.Unlock()
		}()
		if stop != nil {
			stop()
		}
		info := cons.CachedInfo()
		if info == nil || info.Name == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		defer cancel()
		_ = s.stream.DeleteConsumer(ctx, info.Name)
	}()
}

// pendingDrops counts the consumer deletes in flight (stopAndDrop).
type pendingDrops struct {
	mu sync.Mutex
	n  int
}

// waitDrops waits until no consumer delete is in flight, or for d: Close
// lets the deletes reach the server before it closes the connection (a
// clean stop then leaves no consumer behind), without hanging on a server
// that does not answer.
func (s *store) waitDrops(d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.drops.mu.Lock()
		n := s.drops.n
		s.drops.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

// consumerLimitErr is err as an *UnavailableError (a 503 with
// Retry-After through serve, not a 500) wrapping [ErrConsumerLimit] when
// the server refused to create a consumer because the stream holds its
// limit of them; any other err is returned as it is.
func consumerLimitErr(op string, err error) error {
	if !isConsumerLimit(err) {
		return err
	}
	return &UnavailableError{Op: op, Attempts: 1, Err: fmt.Errorf("%w: %w", ErrConsumerLimit, err)}
}

// isConsumerLimit reports whether err is the server's refusal of a
// consumer past the stream's (or account's) limit.
func isConsumerLimit(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeMaximumConsumersLimit
}

// ErrConsumerLimit: the NATS server refused a consumer because the stream
// holds its limit of them (errors.Is on a read's error).
var ErrConsumerLimit = errors.New("the stream holds the server's limit of consumers " +
	"(1,000 per stream unless the stream or account sets one); those a killed process left expire 5 minutes after their last use: " +
	"`nats stream info FLEDGER` counts them, `nats consumer rm FLEDGER NAME` removes one")

// followIssue is the last error a follower met creating its consumer
// (noteFollow), for [store.FollowIssue].
type followIssue struct{ err error }

// noteFollow records the outcome of a follower's try to create its
// consumer: err, or nil once one was created.
func (s *store) noteFollow(err error) { s.followErr.Store(followIssue{err}) }

// FollowIssue is the last error a follower of this store met creating its
// stream consumer, nil once one was created since: an engine whose fold
// stands still names it (a consumer limit, a permission) instead of only
// the time it waited.
func (s *store) FollowIssue() error {
	if fi, ok := s.followErr.Load().(followIssue); ok {
		return fi.err
	}
	return nil
}
