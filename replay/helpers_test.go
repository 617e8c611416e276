package replay_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

// openStore is testutil.Store with testutil.NoFsync (before opts): these
// tests need no power-loss durability.
func openStore(t testing.TB, opts ...events.Option) events.Store {
	t.Helper()
	return testutil.Store(t, append([]events.Option{testutil.NoFsync}, opts...)...)
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

// scenarioNames are the fixture scenarios' names (file names without
// .yaml).
func scenarioNames(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, f := range testutil.Scenarios(t) {
		b := filepath.Base(f)
		out = append(out, b[:len(b)-len(".yaml")])
	}
	return out
}

// rebuiltProjections rebuilds st's projections into a new database in a
// temporary directory and opens it (closed when the test ends).
func rebuiltProjections(t testing.TB, ctx context.Context, st events.Store) *projections.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.sqlite")
	_, err := replay.Rebuild(ctx, st, path, replay.RebuildOptions{})
	testutil.NoError(t, err)
	db, err := projections.Open(ctx, path)
	testutil.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// twoProviderEngine is an engine for agent main on st, on a manual clock
// at testutil.T0 with seeds 42, with testutil.TwoProviderConfig applied;
// it also returns that config. The engine is closed at the test's end.
func twoProviderEngine(t testing.TB, ctx context.Context, st events.Store) (*engine.Engine, *config.Loaded) {
	t.Helper()
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	e, err := engine.New(ctx, st, "main", engine.WithClock(testutil.NewManualClock(testutil.T0)), engine.WithSeeds(func(string) uint64 { return 42 }))
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	_, _, err = e.ApplyConfig(ctx, "test", l)
	testutil.NoError(t, err)
	return e, l
}
