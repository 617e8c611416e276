package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fledger/fledger/events"
)

// storeOptions turns the global flags into event store options: the
// embedded server on --data, or --nats with its credentials and TLS
// files. --nats-password falls back to $FLEDGER_NATS_PASSWORD.
func (g *globals) storeOptions() []events.Option {
	// The store's warnings (a stream kept with another replica count, no
	// atomic batch publish) go to the command's log.
	log := g.Log
	if log == nil {
		log = slog.Default()
	}
	common := []events.Option{events.WithLogger(log)}
	if g.ReplicasSet {
		common = append(common, events.WithReplicas(g.Replicas))
	}
	if g.FirstSeq > 1 {
		common = append(common, events.WithFirstSeq(g.FirstSeq))
	}
	if m, err := events.ParseAtomicBatches(g.AtomicBatches); err == nil && m != events.BatchesAuto {
		common = append(common, events.WithAtomicBatches(m))
	}
	if g.NATSURL == "" {
		return append([]events.Option{events.WithDataDir(g.DataDir)}, common...)
	}
	opts := append([]events.Option{events.WithURL(g.NATSURL)}, common...)
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
	if g.DataDir != "" {
		// --nats naming the listener of `serve --nats-listen` on this
		// --data: its credentials, read-only unless the command writes
		// (ignored with --nats-user or --nats-creds, or another server).
		access := events.ReadOnly
		if g.Writes {
			access = events.ReadWrite
		}
		opts = append(opts, events.WithListenerCredentials(g.DataDir, access))
	}
	return opts
}

// openStore opens the event store the global flags describe; extra options
// (e.g. events.WithListen) are applied after them. Close it when done.
func openStore(ctx context.Context, g *globals, extra ...events.Option) (events.Store, error) {
	st, err := events.Open(ctx, append(g.storeOptions(), extra...)...)
	if errors.Is(err, events.ErrAuthorization) && g.NATSUser == "" && g.NATSCreds == "" && loopbackURL(g.NATSURL) {
		err = fmt.Errorf("%w (the listener of `fledger serve --nats-listen` requires a user: run with that server's --data, which holds %s and %s, or pass --nats-user %s --nats-password PASSWORD)",
			err, events.ReaderCredentialsFile, events.WriterCredentialsFile, events.ReaderUser)
	}
	if err != nil && g.NATSFromEnv {
		err = fmt.Errorf("%w (the server is NATS_URL=%s; unset it, or pass --nats \"\" for the embedded server)", err, events.RedactURL(g.NATSURL))
	}
	return st, err
}

// errNoLedger: a read command pointed at a data directory that holds no
// ledger.
var errNoLedger = errors.New("no ledger")

// openLedger opens the event store for a command that reads (or adds to)
// an existing ledger. Only run, serve and config apply create one: an
// embedded data directory without a ledger — a mistyped --data, or an
// empty directory — is refused (errNoLedger) rather than given a new,
// empty one. With --nats the server's stream is used as it is.
func openLedger(ctx context.Context, g *globals) (events.Store, error) {
	if err := g.checkLedger(); err != nil {
		return nil, err
	}
	return openStore(ctx, g)
}

// checkLedger refuses (errNoLedger, saying what to do) an embedded --data
// directory holding no fledger stream (jetstream/<account>/streams/FLEDGER);
// nil with --nats.
func (g *globals) checkLedger() error {
	if g.NATSURL != "" {
		return nil
	}
	dir := g.DataDir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	hint := "only `fledger run`, `serve` and `config apply` create a ledger: check --data, or read a NATS server's with --nats URL or NATS_URL"
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%w in %s: the directory does not exist (%s)", errNoLedger, dir, hint)
	} else if !fi.IsDir() {
		return fmt.Errorf("%w in %s: it is not a directory (%s)", errNoLedger, dir, hint)
	}
	accts, _ := os.ReadDir(filepath.Join(dir, "jetstream"))
	for _, a := range accts {
		if _, err := os.Stat(filepath.Join(dir, "jetstream", a.Name(), "streams", events.StreamName, "meta.inf")); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w in %s: it holds no fledger event store (%s)", errNoLedger, dir, hint)
}

// loopbackURL reports whether every server of urls is on this machine
// (where `fledger serve --nats-listen` would be).
func loopbackURL(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		h := strings.TrimSpace(u)
		if i := strings.Index(h, "://"); i >= 0 {
			h = h[i+3:]
		}
		if i := strings.LastIndex(h, "@"); i >= 0 {
			h = h[i+1:]
		}
		if i := strings.LastIndex(h, ":"); i >= 0 {
			h = h[:i]
		}
		if h != "127.0.0.1" && h != "localhost" && h != "[::1]" {
			return false
		}
	}
	return true
}

// natsFlagsWithoutNATS refuses the connection flags of an external server
// given without one (--nats or NATS_URL): the embedded server takes none
// of them, and ignoring them would read the local ledger while the user
// meant another.
func (g *globals) natsFlagsWithoutNATS() error {
	if g.NATSURL != "" {
		return nil
	}
	for _, f := range []struct{ name, value string }{
		{"--nats-creds", g.NATSCreds}, {"--nats-user", g.NATSUser}, {"--nats-password", g.NATSPassword},
		{"--nats-tls-ca", g.NATSTLSCA}, {"--nats-tls-cert", g.NATSTLSCert}, {"--nats-tls-key", g.NATSTLSKey},
	} {
		if f.value != "" {
			return fmt.Errorf("%s without --nats (or NATS_URL): it is for an external NATS server; the embedded one (--data %s) takes none", f.name, g.DataDir)
		}
	}
	return nil
}
