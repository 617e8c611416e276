package events

import (
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// The server's refusal to create a consumer past the stream's limit is an
// unavailability (serve answers 503 with Retry-After) that names the
// limit and the way out; other errors pass through unchanged.
func TestConsumerLimitErr(t *testing.T) {
	limit := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeMaximumConsumersLimit, Description: "maximum consumers limit reached"}
	err := consumerLimitErr("read", limit)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, limit) || !errors.Is(err, ErrConsumerLimit) {
		t.Fatalf("%v: want ErrUnavailable wrapping the API error", err)
	}
	for _, want := range []string{"events: read on FLEDGER: stream unavailable", "maximum consumers limit reached", "limit of consumers", "nats consumer rm FLEDGER NAME"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	other := &jetstream.APIError{Code: 404, ErrorCode: jetstream.JSErrCodeStreamNotFound}
	if got := consumerLimitErr("read", other); got != error(other) {
		t.Fatalf("another API error became %v", got)
	}
}

// A follower's consumer refused at the limit names ErrConsumerLimit, and
// the store keeps the last such error for an engine whose fold stands
// still, until a consumer is created.
func TestFollowIssue(t *testing.T) {
	limit := &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeMaximumConsumersLimit, Description: "maximum consumers limit reached"}
	err := followErr(limit)
	if !errors.Is(err, ErrConsumerLimit) || !errors.Is(err, limit) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("%v: want ErrConsumerLimit wrapping the API error, not an outage", err)
	}
	s := &store{}
	if s.FollowIssue() != nil {
		t.Fatal("an issue before any follower")
	}
	s.noteFollow(err)
	if !errors.Is(s.FollowIssue(), ErrConsumerLimit) {
		t.Fatalf("FollowIssue %v", s.FollowIssue())
	}
	s.noteFollow(nil)
	if s.FollowIssue() != nil {
		t.Fatalf("FollowIssue %v after a consumer was created", s.FollowIssue())
	}
}
