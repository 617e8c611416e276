package events

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

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
