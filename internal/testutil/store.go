package testutil

import (
	"context"
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
