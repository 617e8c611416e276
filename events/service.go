package events

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/micro"
)

// ErrNoConnection: the store has no NATS connection (an in-memory store),
// so nothing can be served on NATS through it.
var ErrNoConnection = errors.New("events: the store has no NATS connection")

// AddService registers the NATS micro service cfg on st's own connection,
// so a service answers on the server that holds the ledger without the
// caller touching the connection. Stop it (micro.Service.Stop) before
// closing the store. A store without NATS gives an error wrapping
// [ErrNoConnection].
func AddService(st Store, cfg micro.Config) (micro.Service, error) {
	s, ok := st.(*store)
	if !ok {
		return nil, fmt.Errorf("events: add service %s: %w", cfg.Name, ErrNoConnection)
	}
	if s.isClosed() {
		return nil, fmt.Errorf("events: add service %s: %w", cfg.Name, ErrClosed)
	}
	svc, err := micro.AddService(s.nc, cfg)
	if err != nil {
		return nil, fmt.Errorf("events: add service %s: %w", cfg.Name, err)
	}
	return svc, nil
}

// FlushService waits until the server has every subscription the
// store's connection made so far (a service's endpoints added after
// AddService): a request from another connection sent after it returns
// finds them, instead of "no responders".
func FlushService(ctx context.Context, st Store) error {
	s, ok := st.(*store)
	if !ok {
		return fmt.Errorf("events: flush: %w", ErrNoConnection)
	}
	if err := s.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("events: flush: %w", err)
	}
	return nil
}
