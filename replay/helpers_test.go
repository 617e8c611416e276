package replay_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// openStore is testutil.OpenStore with testutil.NoFsync (before opts),
// without the data directory: these tests need no power-loss durability.
func openStore(t testing.TB, opts ...events.Option) events.Store {
	t.Helper()
	st, _ := testutil.OpenStore(t, append([]events.Option{testutil.NoFsync}, opts...)...)
	return st
}

// runScenario plays fixtures/scenarios/<name>.yaml into st as agent.
func runScenario(t testing.TB, st events.Store, name, agent string) *scenario.Report {
	t.Helper()
	sc, err := scenario.LoadFile(filepath.Join("..", "fixtures", "scenarios", name+".yaml"))
	testutil.NoError(t, err)
	rep, err := scenario.Run(context.Background(), st, sc, scenario.Options{Agent: agent})
	testutil.NoError(t, err)
	return rep
}

func scenarioNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "scenarios", "*.yaml"))
	testutil.NoError(t, err)
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
