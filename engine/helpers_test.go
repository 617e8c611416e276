package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
)

// t0 is the tests' start time.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// testConfig: anthropic primary with two profiles, openai fallback with one.
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

func newFakeClock() *fakeClock { return &fakeClock{now: t0} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.Advance(d)
	return ctx.Err()
}

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// newEngine starts an engine for agent "main" on st with testConfig applied.
func newEngine(t testing.TB, st events.Store, clock Clock, opts ...Option) *Engine {
	t.Helper()
	ctx := ctxT(t)
	e, err := New(ctx, st, "main", append([]Option{WithClock(clock), WithSeeds(func(string) uint64 { return 42 })}, opts...)...)
	require_NoError(t, err)
	t.Cleanup(e.Close)
	l, err := config.Parse([]byte(testConfig), "test")
	require_NoError(t, err)
	_, _, err = e.ApplyConfig(ctx, "test", l)
	require_NoError(t, err)
	return e
}

// script answers calls from a table: provider/model → error (nil = ok).
type script map[string]error

func (s script) Call(_ context.Context, r CallRequest) (Answer, error) {
	if err, ok := s[r.Provider+"/"+r.Model]; ok && err != nil {
		return Answer{}, err
	}
	return Answer{Text: "hello from " + r.Provider}, nil
}

func rateLimit() error {
	return &classify.ProviderError{Provider: "anthropic", Status: 429, Code: "rate_limit_error",
		Message: `Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`}
}

func authError() error {
	return &classify.ProviderError{Provider: "anthropic", Status: 401, Code: "authentication_error",
		Message: `Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}
}

func types(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}
