package main

import (
	"context"
	"os"

	"github.com/fledger/fledger/events"
)

// storeOptions turns the global flags into event store options: the
// embedded server on --data, or --nats with its credentials and TLS
// files. --nats-password falls back to $FLEDGER_NATS_PASSWORD.
func (g *globals) storeOptions() []events.Option {
	if g.NATSURL == "" {
		return []events.Option{events.WithDataDir(g.DataDir)}
	}
	opts := []events.Option{events.WithURL(g.NATSURL)}
	pw := g.NATSPassword
	if pw == "" {
		pw = os.Getenv("FLEDGER_NATS_PASSWORD")
	}
	if g.NATSUser != "" {
		opts = append(opts, events.WithUserInfo(g.NATSUser, pw))
	}
	if g.NATSCreds != "" {
		opts = append(opts, events.WithCredsFile(g.NATSCreds))
	}
	if g.NATSTLSCA != "" || g.NATSTLSCert != "" || g.NATSTLSKey != "" {
		opts = append(opts, events.WithTLS(g.NATSTLSCA, g.NATSTLSCert, g.NATSTLSKey))
	}
	return opts
}

// openStore opens the event store the global flags describe; extra options
// (e.g. events.WithListen) are applied after them. Close it when done.
func openStore(ctx context.Context, g *globals, extra ...events.Option) (events.Store, error) {
	return events.Open(ctx, append(g.storeOptions(), extra...)...)
}
