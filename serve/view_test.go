package serve_test

import (
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// scenarioStore runs the fixture scenario file into a fresh store as
// agent main (`fledger run`).
func scenarioStore(t *testing.T, file string) events.Store {
	t.Helper()
	sc, err := scenario.LoadFile(file)
	testutil.NoError(t, err)
	st := testutil.Store(t)
	_, err = scenario.Run(testutil.Context(t), st, sc, scenario.Options{Agent: "main"})
	testutil.NoError(t, err)
	return st
}

// viewServer is `fledger view` of st: read-only, no config applied.
func viewServer(t *testing.T, st events.Store) *server {
	t.Helper()
	return startServer(t, st, serve.Config{ReadOnly: true})
}

func TestExplore(t *testing.T) {
	st := scenarioStore(t, "../fixtures/scenarios/incident-day.yaml")
	srv := viewServer(t, st)
	code, b := do(t, "GET", srv.url+"/v1/timeline", "")
	t.Logf("%d %s", code, b)
	code, b = do(t, "GET", srv.url+"/v1/timeline?since=2026-03-02T08:00:00Z", "")
	t.Logf("%d %s", code, b)
	t.Log(dump(t, st))
}
