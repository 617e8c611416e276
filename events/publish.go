package events

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publish sends one commit message and waits for its PubAck.
func (s *store) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	return s.js.PublishMsg(ctx, msg)
}
