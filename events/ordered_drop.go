package events

import (
	"context"
	"errors"
	"fmt"

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
// leaves its consumers to it).
func (s *store) dropOrdered(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil || info.Name == "" {
		return
	}
	name := info.Name
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
		defer cancel()
		_ = s.stream.DeleteConsumer(ctx, name)
	}()
}

// consumerLimitErr is err as an *UnavailableError (a 503 with
// Retry-After through serve, not a 500) naming the cause and the way out
// when the server refused to create a consumer because the stream holds
// its limit of them; any other err is returned as it is.
func consumerLimitErr(op string, err error) error {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeMaximumConsumersLimit {
		return err
	}
	return &UnavailableError{Op: op, Attempts: 1, Err: fmt.Errorf("%w: the stream holds the server's limit of consumers "+
		"(1,000 per stream unless the stream or account sets one); those a killed process left expire 5 minutes after their last use: "+
		"`nats stream info FLEDGER` counts them, `nats consumer rm FLEDGER NAME` removes one", err)}
}
