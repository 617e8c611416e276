package engine

import (
	"context"
	"testing"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// newEngine starts an engine for agent "main" on st with testutil.TwoProviderConfig applied.
func newEngine(t testing.TB, st events.Store, clock Clock, opts ...Option) *Engine {
	t.Helper()
	return newAgentEngine(t, st, clock, "main", opts...)
}

// newAgentEngine is newEngine for agent.
func newAgentEngine(t testing.TB, st events.Store, clock Clock, agent string, opts ...Option) *Engine {
	t.Helper()
	ctx := testutil.Context(t)
	e, err := New(ctx, st, agent, append([]Option{WithClock(clock), WithSeeds(func(string) uint64 { return 42 })}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	_, _, err = e.ApplyConfig(ctx, "test", l)
	testutil.NoError(t, err)
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
