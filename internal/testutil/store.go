package testutil

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// Context is a context ended after a minute or at the test's end, for
// tests whose every call must be bounded.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// NoFsync is a store option for tests that need no power-loss
// durability: the store fsyncs on an interval instead of on every write.
var NoFsync = events.WithSyncAlways(false, time.Minute)

// OpenStore opens an embedded store in a fresh t.TempDir() (opts come
// after the data directory, so they may override it) and closes it at the
// test's end. It returns the store and its data directory.
func OpenStore(t testing.TB, opts ...events.Option) (events.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := events.Open(context.Background(), append([]events.Option{events.WithDataDir(dir)}, opts...)...)
	NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st, dir
}

// Store is OpenStore for the tests that need only the store.
func Store(t testing.TB, opts ...events.Option) events.Store {
	t.Helper()
	st, _ := OpenStore(t, opts...)
	return st
}

// OpenPair opens two stores on one stream, as two gateway processes
// sharing one NATS server: the first an embedded server listening on
// loopback (OpenStore with events.WithListen(0), then opts), the second a
// connection to it with the listener's writer credentials. Both close at
// the test's end.
func OpenPair(t testing.TB, opts ...events.Option) (first, second events.Store) {
	t.Helper()
	first, dir := OpenStore(t, append([]events.Option{events.WithListen(0)}, opts...)...)
	second, err := events.Open(context.Background(), events.WithURL(first.ClientURL()), events.WithListenerCredentials(dir, events.ReadWrite))
	NoError(t, err)
	t.Cleanup(func() { _ = second.Close() })
	return first, second
}

// LastSeq is st's last sequence over the whole stream.
func LastSeq(t testing.TB, st events.Store) uint64 {
	t.Helper()
	n, err := st.LastSeq(Context(t), "")
	NoError(t, err)
	return n
}

// RefusingStore is a store that refuses every AppendCommit (the engine's
// only way to commit) as invalid, with an events.EventError wrapping
// events.ErrInvalidEnvelope, while Refuse is set; everything else,
// Append and AppendGuarded included, goes to the Store it wraps.
type RefusingStore struct {
	events.Store
	Refuse atomic.Bool
}

// AppendCommit refuses the commit while Refuse is set.
func (s *RefusingStore) AppendCommit(ctx context.Context, req events.AppendRequest) (events.AppendResult, error) {
	if s.Refuse.Load() {
		return events.AppendResult{}, &events.EventError{Index: 0, Type: req.Events[0].Type, Field: "key", Reason: "refused by the test", Err: events.ErrInvalidEnvelope}
	}
	return s.Store.AppendCommit(ctx, req)
}
