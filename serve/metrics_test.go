package serve_test

import (
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// With the engine's appends wired to projections/metrics (as `fledger
// serve` does), fledger_append_duration_seconds counts every commit.
func TestHTTP_AppendDurationMetricCountsEveryCommit(t *testing.T) {
	pm := metrics.New()
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) {
		c.Metrics = pm.Registry()
		c.EngineOptions = append(c.EngineOptions, engine.WithAppendObserver(pm.ObserveAppend))
	})
	step, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	if status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`); status != 200 {
		t.Fatalf("outcome: %d %s", status, b)
	}
	_ = step
	mfs, err := pm.Registry().Gather()
	testutil.NoError(t, err)
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == "fledger_append_duration_seconds" {
			n = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if n < 2 { // at least TurnStarted and the success
		t.Fatalf("fledger_append_duration_seconds count %d", n)
	}
}
