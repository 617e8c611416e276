package events

import (
	"fmt"
	"log/slog"
	"time"
)

// EventOpt sets an envelope field in [New].
type EventOpt func(*Event)

// WithCausation sets the id of the event or command that caused the event.
func WithCausation(id string) EventOpt { return func(e *Event) { e.CausationID = id } }

// WithCorrelation sets the correlation id (the turn id for turn-driven
// events), grouping every event of one turn across aggregates.
func WithCorrelation(id string) EventOpt { return func(e *Event) { e.CorrelationID = id } }

// WithEventID sets the event id instead of a fresh UUIDv7 (tests and
// importers); it must be a UUID, or encoding refuses the event.
func WithEventID(id string) EventOpt { return func(e *Event) { e.ID = id } }

// Defaults of the store options.
const (
	// DefaultDuplicateWindow is how long JetStream remembers a Nats-Msg-Id.
	DefaultDuplicateWindow = 2 * time.Minute
	// DefaultMaxCommitBytes is the largest commit body accepted: 1 MiB less
	// 4 KiB of room for headers, so a commit always fits the server's
	// default 1 MiB max payload.
	DefaultMaxCommitBytes = 1<<20 - 4<<10
	// DefaultMaxEventsPerCommit is the most events one decision may append.
	DefaultMaxEventsPerCommit = 256
	// DefaultDataDir is the embedded server's data directory.
	DefaultDataDir = "./fledger-data"
	// DefaultTimeout bounds each JetStream API request and publish whose
	// context has no deadline.
	DefaultTimeout = 10 * time.Second
)

// Option configures [Open]. Options validate their input; a bad value makes
// Open return an error wrapping [ErrInvalidOption].
type Option func(*config) error

type config struct {
	dataDir         string
	url             string
	user, password  string
	creds           string
	tlsCA           string
	tlsCert, tlsKey string
	listen          bool
	port            int
	writerPW        string // listener passwords (WithListenPasswords)
	readerPW        string
	readerRequests  []string // WithReaderRequests
	credsDir        string   // WithListenerCredentials
	credsAccess     Access
	syncAlways      bool
	syncInterval    time.Duration
	replicas        int
	replicasSet     bool   // WithReplicas was given: a different existing count is logged
	firstSeq        uint64 // WithFirstSeq: the first sequence of a stream the store creates
	dupWindow       time.Duration
	maxCommitBytes  int
	maxEvents       int
	registry        *Registry
	validator       PayloadValidator
	logger          *slog.Logger
	groupCommit     bool
	atomicBatches   AtomicBatches
	timeout         time.Duration
	retryUnknown    time.Duration // WithRetryUnknown
	attemptTimeout  time.Duration
}

func defaultConfig() config {
	return config{
		dataDir:        DefaultDataDir,
		syncAlways:     true,
		replicas:       1,
		dupWindow:      DefaultDuplicateWindow,
		groupCommit:    true,
		atomicBatches:  BatchesAuto,
		maxCommitBytes: DefaultMaxCommitBytes,
		maxEvents:      DefaultMaxEventsPerCommit,
		timeout:        DefaultTimeout,
		retryUnknown:   DefaultRetryUnknown,
		attemptTimeout: DefaultAttemptTimeout,
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}

// WithDataDir sets the embedded server's data directory (JetStream files in
// dir/jetstream, lock in dir/fledger.lock). Default [DefaultDataDir].
// Ignored with [WithURL].
func WithDataDir(dir string) Option {
	return func(c *config) error {
		if dir == "" {
			return invalid("empty data directory")
		}
		c.dataDir = dir
		return nil
	}
}

// WithURL connects to an existing NATS server or cluster (comma-separated
// URLs) instead of starting the embedded one.
func WithURL(url string) Option {
	return func(c *config) error {
		if url == "" {
			return invalid("empty NATS URL")
		}
		c.url = url
		return nil
	}
}

// WithUserInfo authenticates to the [WithURL] server with a user name and
// password.
func WithUserInfo(user, password string) Option {
	return func(c *config) error { c.user, c.password = user, password; return nil }
}

// WithCredsFile authenticates to the [WithURL] server with a NATS
// credentials (JWT + nkey seed) file.
func WithCredsFile(path string) Option {
	return func(c *config) error {
		if path == "" {
			return invalid("empty credentials file path")
		}
		c.creds = path
		return nil
	}
}

// WithTLS sets TLS for the [WithURL] connection: ca (PEM file) verifies the
// server; cert and key (PEM files) present a client certificate. Any may be
// empty, but cert and key go together.
func WithTLS(ca, cert, key string) Option {
	return func(c *config) error {
		if (cert == "") != (key == "") {
			return invalid("TLS client cert and key must be given together")
		}
		c.tlsCA, c.tlsCert, c.tlsKey = ca, cert, key
		return nil
	}
}

// WithListen makes the embedded server also accept connections on
// 127.0.0.1:port (0 picks a free port; see [Store.ClientURL]). Default: no
// socket at all, in-process connection only. The listener requires a user:
// [WriterUser] (fledger itself) or the read-only [ReaderUser]; their
// credentials are kept in the data directory ([WriterCredentialsFile],
// [ReaderCredentialsFile]; see [WithListenerCredentials]).
func WithListen(port int) Option {
	return func(c *config) error {
		if port < 0 || port > 65535 {
			return invalid("port %d out of range", port)
		}
		c.listen, c.port = true, port
		return nil
	}
}

// WithSyncAlways chooses the embedded file store's sync policy. true (the
// default) fsyncs every write before the append is acknowledged, so an
// acknowledged append survives a machine crash (about 6k single appends/s
// on a 2-core VM). false fsyncs every interval (0 = the server default of
// 2 minutes): about ten times faster, but a power loss can lose the last
// interval's acknowledged appends. A server given with [WithURL] keeps its
// own policy (its jetstream sync_interval setting).
func WithSyncAlways(always bool, interval time.Duration) Option {
	return func(c *config) error {
		if interval < 0 {
			return invalid("negative sync interval")
		}
		c.syncAlways, c.syncInterval = always, interval
		return nil
	}
}

// WithReplicas sets the replica count of the stream the store creates (1,
// 3 or 5; default 1). A cluster given with [WithURL] needs at least that
// many JetStream servers; the embedded server supports only 1. It applies
// when the stream is created: an existing stream keeps the replicas (and
// placement) its operator chose — [Open] accepts it and, when the counts
// differ, logs the difference ([WithLogger]); change it with
// `nats stream edit FLEDGER --replicas N`.
func WithReplicas(n int) Option {
	return func(c *config) error {
		if n != 1 && n != 3 && n != 5 {
			return invalid("replicas %d: want 1, 3 or 5", n)
		}
		c.replicas, c.replicasSet = n, true
		return nil
	}
}

// WithFirstSeq makes the stream the store creates start at sequence n
// instead of 1 (JetStream's first_seq): a fresh stream that continues the
// sequences of an archived one (docs/operations.md, "Archiving and long
// history"), so a sequence names one commit across the whole history. It
// applies when the stream is created; an existing stream created with
// another first sequence is refused ([ErrStreamConfig]: it was created
// before, e.g. by a command run between removing the archived stream and
// this start). 0 and 1 mean the beginning and check nothing. n above
// [MaxFirstSeq] is refused: it would leave the stream less than
// [FirstSeqHeadroom] sequences below [MaxExactInt].
func WithFirstSeq(n uint64) Option {
	return func(c *config) error {
		if n > MaxExactInt {
			// Sequences are read as numbers by JSON readers (from_seq,
			// seq in every record): past 2^53-1 they are not exact, and
			// near 2^64 the server's own state overflows.
			return fmt.Errorf("events: first sequence %d is above %d, the largest a JSON reader holds exactly", n, uint64(MaxExactInt))
		}
		if n > MaxFirstSeq {
			// The stream would grow past MaxExactInt while in use.
			return fmt.Errorf("events: first sequence %d is %d below %d, the largest a JSON reader holds exactly: the stream would grow past it (want at most %d, leaving 2^50: a stream continuing an archived one starts at the archive's last sequence + 1)",
				n, uint64(MaxExactInt)-n, uint64(MaxExactInt), uint64(MaxFirstSeq))
		}
		c.firstSeq = n
		return nil
	}
}

// WithRetryUnknown sets how long an operation the stream does not answer
// is retried (default [DefaultRetryUnknown]; 0 = send once): a request
// lost to a stream leader election, a server restart or a lost connection.
// An append is re-sent with the same message id and expectation, so it is
// stored once whatever happened to the earlier sends; each send waits at
// most attempt (default [DefaultAttemptTimeout], at most the timeout; 0
// keeps the default). When the time runs out the error is an
// *[UnavailableError] saying whether the append may have been stored.
// [Open] checks that the duplicate window covers the retry time.
func WithRetryUnknown(total, attempt time.Duration) Option {
	return func(c *config) error {
		if total < 0 || attempt < 0 {
			return invalid("negative retry time")
		}
		c.retryUnknown = total
		if attempt > 0 {
			c.attemptTimeout = attempt
		}
		return nil
	}
}

// WithGroupCommit turns group commit on (the default) or off: concurrent
// appends queue and are sent together, pipelined or as ADR-50 atomic
// batches that share one fsync ([WithAtomicBatches]), while a lone append
// is published at once (publish.go). Off, every append is its own publish.
func WithGroupCommit(on bool) Option {
	return func(c *config) error { c.groupCommit = on; return nil }
}

// WithDuplicateWindow sets how long the stream remembers commit ids to drop
// re-sent appends (default [DefaultDuplicateWindow]; at least 100 ms, and
// at least twice the timeout, which [Open] checks: the window is what makes
// two writers deciding one turn step store once).
func WithDuplicateWindow(d time.Duration) Option {
	return func(c *config) error {
		if d < 100*time.Millisecond {
			return invalid("duplicate window %v is under 100ms", d)
		}
		c.dupWindow = d
		return nil
	}
}

// WithMaxCommitBytes sets the largest commit body accepted, in bytes
// (default [DefaultMaxCommitBytes]). It must leave 4 KiB of room under the
// server's max payload; Open checks.
func WithMaxCommitBytes(n int) Option {
	return func(c *config) error {
		if n < 1024 || n > 64<<20 {
			return invalid("max commit bytes %d: want 1 KiB..64 MiB", n)
		}
		c.maxCommitBytes = n
		return nil
	}
}

// WithMaxEventsPerCommit sets the most events one append may carry
// (default [DefaultMaxEventsPerCommit]).
func WithMaxEventsPerCommit(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("max events per commit %d < 1", n)
		}
		c.maxEvents = n
		return nil
	}
}

// WithRegistry sets the registry used to encode and decode events
// (default [NewCatalogRegistry]).
func WithRegistry(r *Registry) Option {
	return func(c *config) error {
		if r == nil {
			return invalid("nil registry")
		}
		c.registry = r
		return nil
	}
}

// WithValidator validates every payload against its schema before it is
// published (e.g. schemas.NewValidator()). Default none: the Go payload
// types already fix every field's type; see docs/events.md "Validation".
func WithValidator(v PayloadValidator) Option {
	return func(c *config) error { c.validator = v; return nil }
}

// WithLogger routes the embedded server's log lines to l (notices at debug
// level). Default: discarded.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.logger = l; return nil }
}

// WithTimeout bounds each JetStream request whose context has no deadline
// (default [DefaultTimeout]).
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("timeout %v <= 0", d)
		}
		c.timeout = d
		return nil
	}
}
