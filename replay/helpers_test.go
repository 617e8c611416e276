package replay_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
)

func require_NoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// openStore opens a store on an embedded server in a fresh temp dir, with
// opts after the defaults.
func openStore(t testing.TB, opts ...events.Option) events.Store {
	t.Helper()
	s, err := events.Open(context.Background(), append([]events.Option{events.WithDataDir(t.TempDir()), events.WithSyncAlways(false, time.Minute)}, opts...)...)
	require_NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// runScenario plays fixtures/scenarios/<name>.yaml into st as agent.
func runScenario(t testing.TB, st events.Store, name, agent string) *scenario.Report {
	t.Helper()
	sc, err := scenario.LoadFile(filepath.Join("..", "fixtures", "scenarios", name+".yaml"))
	require_NoError(t, err)
	rep, err := scenario.Run(context.Background(), st, sc, scenario.Options{Agent: agent})
	require_NoError(t, err)
	return rep
}

func scenarioNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "scenarios", "*.yaml"))
	require_NoError(t, err)
	if len(files) == 0 {
		t.Fatal("no scenarios in fixtures/scenarios")
	}
	var out []string
	for _, f := range files {
		b := filepath.Base(f)
		out = append(out, b[:len(b)-len(".yaml")])
	}
	return out
}
