package serve_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// testConfig: anthropic primary with two profiles, openai fallback.
const testConfig = `
auth:
  profiles:
    "anthropic:a": {provider: anthropic, type: api_key}
    "anthropic:b": {provider: anthropic, type: api_key}
    "openai:a": {provider: openai, type: api_key}
  order:
    anthropic: ["anthropic:a", "anthropic:b"]
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [openai/gpt-5]
`

func require_NoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openStore(t testing.TB, opts ...events.Option) events.Store {
	t.Helper()
	s, err := events.Open(context.Background(), append([]events.Option{events.WithDataDir(t.TempDir())}, opts...)...)
	require_NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fakeClock is a virtual clock: Sleep advances it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func loadConfig(t testing.TB) *config.Loaded {
	l, err := config.Parse([]byte(testConfig), "test")
	require_NoError(t, err)
	return l
}

type server struct {
	svc *serve.Service
	cl  *client.Client
	url string
}

// startServer serves st over httptest with cfg's defaults filled in.
func startServer(t testing.TB, st events.Store, cfg serve.Config) *server {
	t.Helper()
	cfg.Store = st
	if cfg.Projections == nil {
		db, err := projections.Open(ctxT(t), t.TempDir()+"/p.sqlite")
		require_NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		cfg.Projections = db
	}
	svc, err := serve.New(ctxT(t), cfg)
	require_NoError(t, err)
	t.Cleanup(func() { svc.Close(context.Background()) })
	hs := httptest.NewServer(svc.Handler())
	t.Cleanup(hs.Close)
	return &server{svc: svc, cl: client.New(hs.URL, cfg.Token), url: hs.URL}
}

func defaultServer(t testing.TB, clock engine.Clock, extra ...func(*serve.Config)) (*server, events.Store) {
	// A listener, so a foreign client (natstest.DialWriter) may publish beside it.
	st := openStore(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	cfg := serve.Config{Config: loadConfig(t), EngineOptions: []engine.Option{engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 })}}
	for _, f := range extra {
		f(&cfg)
	}
	return startServer(t, st, cfg), st
}

// twoServers starts two serve instances on one stream: an embedded server
// listening on loopback and a second connection to it with the listener's
// writer credentials, as two gateway hosts would share one NATS server.
// It returns the first instance's store and both servers.
func twoServers(t testing.TB, opts ...engine.Option) (events.Store, *server, *server) {
	t.Helper()
	dir := t.TempDir() // the second writer reads the listener's writer credentials from it
	st1 := openStore(t, events.WithDataDir(dir), events.WithListen(0))
	st2, err := events.Open(context.Background(), events.WithURL(st1.ClientURL()), events.WithListenerCredentials(dir, events.ReadWrite))
	require_NoError(t, err)
	t.Cleanup(func() { _ = st2.Close() })
	a := startServer(t, st1, serve.Config{Config: loadConfig(t), EngineOptions: opts})
	b := startServer(t, st2, serve.Config{Config: loadConfig(t), EngineOptions: opts})
	return st1, a, b
}
