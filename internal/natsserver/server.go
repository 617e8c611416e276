// Package natsserver runs fledger's embedded NATS server: an in-process
// nats-server with JetStream file storage under the data directory,
// reachable only from this process (or, when asked, on a loopback TCP port
// that requires a user and password: see [WriterUser], [ReaderUser]), with
// an exclusive lock on the directory so two fledger processes never
// share one file store.
package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerName is the embedded server's name: a client that connects to
// its listener can tell it from another server (it fsyncs every write).
const ServerName = "fledger-embedded"

// LockFileName is the file inside the data directory that a running
// embedded server holds an exclusive lock on.
const LockFileName = "fledger.lock"

// ErrLocked is returned by [Start] when another process holds the data
// directory's lock.
var ErrLocked = errors.New("data directory is in use by another fledger process")

// Config says how to run the embedded server. The zero value is not valid:
// DataDir is required.
type Config struct {
	// DataDir is the fledger data directory. JetStream keeps its file store
	// in DataDir/jetstream; the lock file is DataDir/fledger.lock. Created
	// (0o750) when missing.
	DataDir string
	// Listen, when true, also accepts client connections on 127.0.0.1:Port
	// (Port 0 picks a free port; see [Server.ClientURL]). When false (the
	// default) the server opens no socket at all and is reachable only
	// through [Server.InProcessConn].
	Listen bool
	// Port is the loopback port used when Listen is true; 0 picks one.
	Port int
	// With Listen, the server requires a user: [WriterUser] (fledger
	// itself, in process or from another fledger process) or [ReaderUser]
	// (read-only). Their passwords are WriterPassword and ReaderPassword
	// when set, else those stored in DataDir ([WriterFile], [ReaderFile]),
	// else generated; the files are (re)written on every start with the
	// listener's URL. Anonymous clients are refused.
	WriterPassword, ReaderPassword string
	// Stream and Subjects are the stream the reader may read and the
	// subjects it may subscribe to (default "FLEDGER", "fledger.>").
	Stream   string
	Subjects []string
	// ReadObjectStores are object stores (bucket names) the reader may
	// read, never write nor create: the engine snapshots'
	// ([ObjectStoreReadSubjects]).
	ReadObjectStores []string
	// ReaderRequests are further subjects the reader may publish to:
	// requests to read-only service endpoints.
	ReaderRequests []string
	// SyncAlways makes the file store fsync every write before the publish
	// is acknowledged, so an acknowledged write survives a machine crash.
	// When false, the store fsyncs every SyncInterval.
	SyncAlways bool
	// SyncInterval is the background fsync period used when SyncAlways is
	// false. 0 means the server default, 2 minutes.
	SyncInterval time.Duration
	// MaxPayload is the largest message the server accepts, in bytes. 0
	// means the server default, 1 MiB.
	MaxPayload int32
	// Logger receives the server's log lines. Nil discards them. Notices and
	// debug lines are logged at debug level, warnings at warn, errors at
	// error.
	Logger *slog.Logger
	// StartTimeout bounds how long Start waits for the server to be ready;
	// 0 means 10 s.
	StartTimeout time.Duration
}

// Server is a running embedded NATS server holding its data directory lock.
type Server struct {
	ns     *server.Server
	lock   *os.File
	dir    string
	listen bool
	writer string // WriterUser's password; "" without Listen
}

// Start locks cfg.DataDir, starts the server and waits until it accepts
// connections. It returns an error wrapping [ErrLocked] (naming the
// directory) when another process holds the lock.
func Start(cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("natsserver: DataDir is required")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("natsserver: data directory %q: %w", cfg.DataDir, err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("natsserver: create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName:             ServerName,
		JetStream:              true,
		StoreDir:               dir,
		DontListen:             !cfg.Listen,
		Host:                   "127.0.0.1",
		Port:                   server.RANDOM_PORT,
		NoSigs:                 true,
		NoLog:                  cfg.Logger == nil,
		SyncAlways:             cfg.SyncAlways,
		SyncInterval:           cfg.SyncInterval,
		MaxPayload:             cfg.MaxPayload,
		DisableJetStreamBanner: true,
	}
	if cfg.Listen && cfg.Port != 0 {
		opts.Port = cfg.Port
	}
	var writer, reader string
	if cfg.Listen {
		if cfg.Stream == "" {
			cfg.Stream = "FLEDGER"
		}
		if len(cfg.Subjects) == 0 {
			cfg.Subjects = []string{"fledger.>"}
		}
		if writer, reader, err = passwords(dir, cfg); err != nil {
			unlockDir(lock)
			return nil, err
		}
		opts.Users = users(cfg, writer, reader)
	}
	if cfg.Listen && cfg.Port > 0 {
		// The server would only report "not ready" after its timeout.
		l, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(cfg.Port)))
		if err != nil {
			unlockDir(lock)
			return nil, fmt.Errorf("natsserver: cannot listen on %s port %d: %w", opts.Host, cfg.Port, err)
		}
		_ = l.Close()
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		unlockDir(lock)
		return nil, fmt.Errorf("natsserver: %w", err)
	}
	if cfg.Logger != nil {
		ns.SetLoggerV2(slogLogger{cfg.Logger}, true, false, false)
	}
	ns.Start()
	timeout := cfg.StartTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if !ns.ReadyForConnections(timeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		unlockDir(lock)
		return nil, fmt.Errorf("natsserver: server in %s not ready after %v", dir, timeout)
	}
	srv := &Server{ns: ns, lock: lock, dir: dir, listen: cfg.Listen, writer: writer}
	if cfg.Listen {
		if err := writeContexts(dir, ns.ClientURL(), writer, reader); err != nil {
			_ = srv.Shutdown(context.Background())
			return nil, err
		}
	}
	return srv, nil
}

// WriterPassword is [WriterUser]'s password, the one to connect with
// (in process too: nats.UserInfo(WriterUser, password)) when the server
// listens; "" when it does not, and then no user is needed.
func (s *Server) WriterPassword() string { return s.writer }

// InProcessConn returns a connection to the server that bypasses the
// network; pass it to nats.InProcessServer.
func (s *Server) InProcessConn() (net.Conn, error) { return s.ns.InProcessConn() }

// ReadyForConnections implements nats.InProcessConnProvider.
func (s *Server) ReadyForConnections(d time.Duration) bool { return s.ns.ReadyForConnections(d) }

// ClientURL is the nats:// URL of the loopback listener, or "" when the
// server does not listen.
func (s *Server) ClientURL() string {
	if !s.listen {
		return ""
	}
	return s.ns.ClientURL()
}

// DataDir is the absolute data directory the server holds.
func (s *Server) DataDir() string { return s.dir }

// NATS is the nats-server itself (tests use it to make the server fail).
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the server, waits for it to flush and close its store, and
// releases the directory lock. ctx bounds the wait; on expiry the lock is
// still released so the caller can exit. Safe to call more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	if s == nil || s.ns == nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("natsserver: shutdown: %w", ctx.Err())
	}
	if s.lock != nil {
		unlockDir(s.lock)
		s.lock = nil
	}
	return err
}

// slogLogger adapts slog to the nats-server Logger interface.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Noticef(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s slogLogger) Warnf(format string, v ...any)   { s.l.Warn(fmt.Sprintf(format, v...)) }
func (s slogLogger) Fatalf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s slogLogger) Errorf(format string, v ...any)  { s.l.Error(fmt.Sprintf(format, v...)) }
func (s slogLogger) Debugf(format string, v ...any)  { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s slogLogger) Tracef(format string, v ...any)  { s.l.Debug(fmt.Sprintf(format, v...)) }
