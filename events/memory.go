package events

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// OpenMemory returns an in-memory [Store]: the JetStream store's semantics
// without NATS, for tests and for programs that embed fledger without a
// server. Commits are checked, encoded and decoded exactly as [Open]'s
// store does (same registry, limits and validator), stored under stream
// sequences from 1, guarded by the expected last sequence of a subject or
// filter (a *[ConflictError] with code [CodeWrongLastSequence] and the
// actual sequence), and de-duplicated by message id within the duplicate
// window ([AppendResult].Duplicate and Taken). Reads, Watch, Follow,
// durable Cursors (by name, for the life of the store) and the [Ledger]
// work as on the stream; [Status] reports it connected to server "memory"
// with one current replica.
//
// It keeps nothing after Close or the process's end, serves only the
// process that opened it (no listener: [Store.ClientURL] is "" and
// [Store.Conn] nil) and never holds a gap or a message fledger did not
// write.
//
// Options: [WithRegistry], [WithValidator], [WithMaxCommitBytes],
// [WithMaxEventsPerCommit], [WithDuplicateWindow] and [WithLogger] apply;
// [WithGroupCommit], [WithSyncAlways], [WithTimeout], [WithRetryUnknown]
// and [WithReplicas](1) are accepted and do nothing (nothing to batch,
// sync, wait for or replicate). The options that need a server —
// [WithURL], [WithDataDir], [WithListen], [WithListenPasswords],
// [WithReaderRequests], [WithListenerCredentials], [WithUserInfo],
// [WithCredsFile], [WithTLS], [WithReplicas] above 1 and [WithFirstSeq]
// above 1 — are refused with
// an error wrapping [ErrInvalidOption] that names the option.
func OpenMemory(opts ...Option) (Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if name := serverOption(cfg); name != "" {
		return nil, invalid("%s needs a NATS server; the in-memory store has none (use events.Open)", name)
	}
	m := &memStore{
		cfg:     cfg,
		reg:     cfg.registry,
		created: time.Now().UTC(),
		last:    map[string]uint64{},
		ids:     map[string]memID{},
		cursors: map[string]*memCursor{},
		changed: make(chan struct{}),
		done:    make(chan struct{}),
	}
	if m.reg == nil {
		m.reg = NewCatalogRegistry()
	}
	return m, nil
}

// serverOption names the first option in cfg that only a NATS server can
// honour, "" when there is none.
func serverOption(cfg config) string {
	def := defaultConfig()
	for _, o := range []struct {
		set  bool
		name string
	}{
		{cfg.url != "", "WithURL"},
		{cfg.dataDir != def.dataDir, "WithDataDir"},
		{cfg.listen, "WithListen"},
		{cfg.writerPW != "" || cfg.readerPW != "", "WithListenPasswords"},
		{len(cfg.readerRequests) > 0, "WithReaderRequests"},
		{cfg.credsDir != "", "WithListenerCredentials"},
		{cfg.user != "" || cfg.password != "", "WithUserInfo"},
		{cfg.creds != "", "WithCredsFile"},
		{cfg.tlsCA != "" || cfg.tlsCert != "", "WithTLS"},
		{cfg.replicas != 1, fmt.Sprintf("WithReplicas(%d)", cfg.replicas)},
		{cfg.firstSeq > 1, fmt.Sprintf("WithFirstSeq(%d)", cfg.firstSeq)},
	} {
		if o.set {
			return o.name
		}
	}
	return ""
}

// memStore is the in-memory [Store]. Messages are only ever appended, and
// a stored message is never changed, so readers take a snapshot of msgs
// under mu and read it without holding the lock.
type memStore struct {
	cfg     config
	reg     *Registry
	created time.Time

	mu      sync.Mutex
	msgs    []memMsg          // msgs[i] is stream sequence i+1
	last    map[string]uint64 // subject -> its last sequence
	ids     map[string]memID  // message id -> where it was stored, within the window
	idQueue []string          // ids in the order stored, for expiry
	cursors map[string]*memCursor
	snaps   memSnapshots
	changed chan struct{} // closed and replaced on every append, ack and nak

	closed    atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
}

// memMsg is one stored commit.
type memMsg struct {
	subject string
	msgID   string
	data    []byte
}

// memID is a message id's stored message and when it was stored.
type memID struct {
	seq uint64
	at  time.Time
}

func (m *memStore) isClosed() bool { return m.closed.Load() }

// notifyLocked wakes every reader waiting for a change. Callers hold mu.
func (m *memStore) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// snapshot returns the messages stored so far and the channel closed at
// the next change.
func (m *memStore) snapshot() ([]memMsg, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msgs, m.changed
}

// wait waits for ch (a change), ctx or Close; false when the reader must
// stop (ctx done or the store closed).
func (m *memStore) wait(ctx context.Context, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return !m.isClosed()
	case <-ctx.Done():
		return false
	case <-m.done:
		return false
	}
}

// lastLocked is the last sequence of filter (a subject or a filter with
// wildcards); 0 when nothing matches. Callers hold mu.
func (m *memStore) lastLocked(filter string) uint64 {
	if !hasWildcard(filter) {
		return m.last[filter]
	}
	var last uint64
	for subj, seq := range m.last {
		if seq > last && subjectMatches(filter, subj) {
			last = seq
		}
	}
	return last
}

// LastSeq implements [Store].
func (m *memStore) LastSeq(ctx context.Context, filter string) (uint64, error) {
	if m.isClosed() {
		return 0, ErrClosed
	}
	if filter != "" {
		if err := checkFilter(filter); err != nil {
			return 0, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if filter == "" {
		return uint64(len(m.msgs)), nil
	}
	return m.lastLocked(filter), nil
}

// Ledger implements [Store].
func (m *memStore) Ledger(ctx context.Context) (Ledger, error) {
	if m.isClosed() {
		return Ledger{}, ErrClosed
	}
	msgs, _ := m.snapshot()
	l := Ledger{Stream: StreamName, Created: m.created, LastSeq: uint64(len(msgs)), FirstSeq: 1}
	if len(msgs) > 0 {
		l.FirstID = msgs[0].msgID
	}
	return l, nil
}

// ClientURL implements [Store]: the in-memory store has no listener.
func (m *memStore) ClientURL() string { return "" }

// Close implements [Store]. It wakes every waiting reader (Watch and
// Follow end, Fetch returns ErrClosed) and makes every later call return
// ErrClosed. The stored commits are dropped with the store.
func (m *memStore) Close() error {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		close(m.done)
	})
	return nil
}

// status is [Status] for the in-memory store.
func (m *memStore) status() StreamStatus {
	if m.isClosed() {
		return StreamStatus{Err: ErrClosed}
	}
	msgs, _ := m.snapshot()
	return StreamStatus{Connected: true, Server: memServer, Leader: memServer, Replicas: 1, Current: 1, LastSeq: uint64(len(msgs))}
}

// memServer is the server name [Status] reports for the in-memory store.
const memServer = "memory"
