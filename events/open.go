package events

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/internal/natsserver"
)

// The steps of [Open]: the options checked, a connection to the embedded
// server or to a NATS URL, the stream created or checked, group commit
// started.

// openConfig applies opts to the default config and refuses a duplicate
// window too short for the store's guarantees ([config.neededDupWindow]).
func openConfig(opts []Option) (config, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return config{}, err
		}
	}
	if need := cfg.neededDupWindow(); cfg.dupWindow < need {
		return config{}, invalid("duplicate window %v is shorter than %v (twice the timeout %v, and the retry time %v plus the timeout)",
			cfg.dupWindow, need, cfg.timeout, cfg.retryUnknown)
	}
	return cfg, nil
}

// connectEmbedded starts the embedded server on cfg's data directory
// (one replica only) and connects to it in process, as the writer when it
// listens (a listener gives the server users). The server is shut down
// again when the connection fails.
func (s *store) connectEmbedded(cfg config) error {
	if cfg.replicas != 1 {
		return invalid("the embedded server supports 1 replica, not %d", cfg.replicas)
	}
	srv, err := natsserver.Start(natsserver.Config{
		DataDir:          cfg.dataDir,
		Listen:           cfg.listen,
		Port:             cfg.port,
		WriterPassword:   cfg.writerPW,
		ReaderPassword:   cfg.readerPW,
		Stream:           StreamName,
		Subjects:         []string{SubjectPrefix + ".>"},
		ReadObjectStores: []string{SnapshotBucket},
		ReaderRequests:   cfg.readerRequests,
		SyncAlways:       cfg.syncAlways,
		SyncInterval:     cfg.syncInterval,
		MaxPayload:       int32(max(1<<20, cfg.maxCommitBytes+headerRoom)),
		Logger:           cfg.logger,
	})
	if err != nil {
		return err
	}
	s.srv = srv
	nopts := []nats.Option{nats.InProcessServer(srv), nats.Name("fledger"), nats.ErrorHandler(asyncErrors(cfg.logger, &s.refused))}
	if pw := srv.WriterPassword(); pw != "" {
		// With a listener the server has users; fledger is the writer.
		nopts = append(nopts, nats.UserInfo(WriterUser, pw))
	}
	s.nc, err = nats.Connect("", nopts...)
	if err != nil {
		_ = srv.Shutdown(context.Background())
		return fmt.Errorf("events: connect to embedded server: %w", err)
	}
	return nil
}

// connectURL connects to the NATS server at cfg.url with cfg's
// credentials (a listener's credentials directory read when no user or
// creds file is given; the user it names is kept in s.cfg, so append
// refuses at once for the reader) and TLS settings. It refuses a server
// whose max payload cannot hold the largest commit plus its headers.
func (s *store) connectURL(cfg config) error {
	nopts := []nats.Option{nats.Name("fledger"), nats.MaxReconnects(-1)}
	if cfg.credsDir != "" && cfg.user == "" && cfg.creds == "" {
		user, pw, err := listenerCredentials(cfg.credsDir, cfg.credsAccess, cfg.url)
		if err != nil {
			return err
		}
		cfg.user, cfg.password = user, pw
		s.cfg.user = user // append refuses at once for the reader
	}
	if cfg.user != "" {
		nopts = append(nopts, nats.UserInfo(cfg.user, cfg.password))
	}
	nopts = append(nopts, nats.ErrorHandler(asyncErrors(cfg.logger, &s.refused)))
	if cfg.logger != nil {
		// A server restarted or a node lost: the connection comes back on
		// its own (MaxReconnects -1), and these lines let an operator see
		// when, next to the requests that failed meanwhile.
		log := cfg.logger
		nopts = append(nopts, nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil { // nil: this process closed it
				log.Warn("events: disconnected from the NATS server; reconnecting", "err", err)
			}
		}), nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("events: reconnected to the NATS server", "server", nc.ConnectedUrlRedacted())
		}))
	}
	if cfg.creds != "" {
		if err := checkCredsFile(cfg.creds); err != nil {
			return err
		}
		nopts = append(nopts, nats.UserCredentials(cfg.creds))
	}
	if cfg.tlsCA != "" {
		nopts = append(nopts, nats.RootCAs(cfg.tlsCA))
	}
	if cfg.tlsCert != "" {
		nopts = append(nopts, nats.ClientCert(cfg.tlsCert, cfg.tlsKey))
	}
	nc, err := nats.Connect(cfg.url, nopts...)
	if err != nil {
		return fmt.Errorf("events: connect to %s: %w", RedactURL(cfg.url), redactURLError(err, cfg.url))
	}
	s.nc = nc
	if mp := nc.MaxPayload(); mp < int64(cfg.maxCommitBytes+headerRoom) {
		nc.Close()
		return invalid("max commit bytes %d plus %d header room exceeds the server's max payload %d", cfg.maxCommitBytes, headerRoom, mp)
	}
	return nil
}

// openStream opens the JetStream context on the connection and creates
// the FLEDGER stream or checks the existing one (ensureStream). A cluster
// that is starting (no meta leader yet, or one that does not yet know
// enough JetStream peers for the replicas) is waited for within the retry
// time, like any unanswered request.
func (s *store) openStream(ctx context.Context, cfg config) error {
	var err error
	if s.js, err = jetstream.New(s.nc, jetstream.WithDefaultTimeout(cfg.timeout)); err != nil {
		return err
	}
	return s.retrying(ctx, "open", "", func(ctx context.Context) error {
		var oerr error
		s.stream, oerr = ensureStream(ctx, s.js, s.streamConfig(), cfg)
		if oerr == nil {
			oerr = s.noteOpened(ctx)
		}
		return oerr
	})
}

// startGroupCommit starts the committer that sends concurrent appends
// together (publish.go), as atomic batches sharing one fsync where they
// pay (batch_mode.go). A stream created without atomic batch publish
// cannot: the committer then pipelines, and the logger says why.
func (s *store) startGroupCommit(cfg config) {
	info := s.stream.CachedInfo()
	srv := batchServer{allowAtomic: info.Config.AllowAtomicPublish, replicas: info.Config.Replicas,
		embedded: s.srv != nil, syncAlways: cfg.syncAlways, serverName: s.nc.ConnectedServerName()}
	batches, why := chooseBatches(cfg.atomicBatches, srv)
	if cfg.logger != nil && !srv.allowAtomic {
		cfg.logger.Warn("stream was created without atomic batch publish: concurrent appends are pipelined (enable allow_atomic on the stream to let group commit send atomic batches where they pay: docs/operations.md \"Group commit on your server\")",
			"stream", StreamName)
	}
	var said func()
	if cfg.logger != nil && srv.allowAtomic && !batches && cfg.atomicBatches == BatchesAuto && !srv.embedded {
		// Said once, at the first flush that would have been a batch: a
		// command that only reads never says it.
		log := cfg.logger
		said = sync.OnceFunc(func() {
			log.Info("group commit pipelines concurrent appends instead of sending atomic batches", "stream", StreamName, "why", why)
		})
	}
	s.group = newCommitter(s.js, s.attemptTimeout(), batches, why, said)
}
