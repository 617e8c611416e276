package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/serve"
)

// meteredServer is `fledger serve` as cmd/fledger assembles it: the
// metrics fold (with the SQLite projections' lag) gathered at /metrics
// beside the service's own, and the engines' appends observed.
func meteredServer(t *testing.T, clock *testutil.ManualClock) (*server, *metrics.Metrics, func() error) {
	t.Helper()
	db, err := projections.Open(testutil.Context(t), t.TempDir()+"/p.sqlite")
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	st := testutil.Store(t)
	pm := metrics.New(metrics.WithStore(st), metrics.WithProjection("sqlite", db.Checkpoint), metrics.WithProcessMetrics())
	srv := startServer(t, st, serve.Config{Config: loadConfig(t), Projections: db, Metrics: pm.Registry(),
		EngineOptions: []engine.Option{engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 }), engine.WithAppendObserver(pm.ObserveAppend)}})
	catchUp := func() error { return pm.CatchUp(testutil.Context(t), st) }
	return srv, pm, catchUp
}

// get GETs url with an Accept header and returns the content type and body.
func get(t *testing.T, url, accept string) (string, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testutil.NoError(t, err)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return resp.Header.Get("Content-Type"), b
}

// After a failover turn (a 429 on the first profile, then a success, both
// with a reported latency), serve's /metrics counts attempts per auth
// profile, has the provider-call latency histogram and fledger_build_info,
// passes promlint, and answers an OpenMetrics Accept in OpenMetrics.
func TestHTTP_MetricsAfterScenarioPerProfileAndLint(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, _, catchUp := meteredServer(t, clock)
	if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"t1"}`); status != 200 {
		t.Fatalf("begin: %d %s", status, b)
	}
	status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"latency_ms":800,"error":{"status":429,"message":"rate limited"}}`)
	if status != 200 {
		t.Fatalf("failure: %d %s", status, b)
	}
	var step serve.TurnStep
	testutil.NoError(t, json.Unmarshal(b, &step))
	for step.Next.Action == "wait" {
		clock.Advance(time.Duration(step.Next.Ms) * time.Millisecond)
		status, b = do(t, "POST", srv.url+"/v1/turns/t1/resume", `{}`)
		if status != 200 {
			t.Fatalf("resume: %d %s", status, b)
		}
		testutil.NoError(t, json.Unmarshal(b, &step))
	}
	if step.Next.Action != "call" {
		t.Fatalf("after the 429: %+v", step.Next)
	}
	if status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", fmt.Sprintf(`{"attempt":%d,"ok":true,"latency_ms":1200}`, step.Next.Attempt)); status != 200 {
		t.Fatalf("success: %d %s", status, b)
	}
	testutil.NoError(t, catchUp())

	ct, body := get(t, srv.url+"/metrics", "")
	if !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	problems, err := promlint.New(strings.NewReader(string(body))).Lint()
	testutil.NoError(t, err)
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	fams := parseText(t, body)
	testutil.NoError(t, err)
	profiles := map[string]float64{}
	for _, mt := range fams["fledger_attempts_total"].GetMetric() {
		profiles[label(mt, "profile")+" "+label(mt, "outcome")+" "+label(mt, "reason")] += mt.GetCounter().GetValue()
	}
	if len(profiles) != 2 || profiles[" failed rate_limit"] != 0 {
		t.Errorf("attempts by profile: %v", profiles)
	}
	var calls uint64
	var sum float64
	for _, mt := range fams["fledger_provider_call_duration_seconds"].GetMetric() {
		calls += mt.GetHistogram().GetSampleCount()
		sum += mt.GetHistogram().GetSampleSum()
	}
	if calls != 2 || sum != 2 {
		t.Errorf("provider call histogram: %d calls, %v s", calls, sum)
	}
	for _, name := range []string{"fledger_build_info", "fledger_serve_requests_total", "fledger_serve_request_duration_seconds",
		"fledger_engine_commits_total", "fledger_projection_stalled_seconds", "fledger_stream_last_sequence", "fledger_append_duration_seconds"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, gone := range []string{"fledger_serve_projection_lag", "fledger_serve_request_seconds"} {
		if fams[gone] != nil {
			t.Errorf("/metrics still has %s", gone)
		}
	}
	if got := fams["fledger_projection_lag_events"]; got == nil || len(got.GetMetric()) != 2 {
		t.Errorf("lag per projection (metrics, sqlite): %v", got)
	}

	ct, body = get(t, srv.url+"/metrics", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	if !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(string(body), "# EOF\n") {
		t.Errorf("OpenMetrics not negotiated: %q", ct)
	}
}

func parseText(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	testutil.NoError(t, err)
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Without a fold (Config.Metrics unset) the service still exports
// fledger_build_info; micro requests are counted by endpoint and code,
// with their durations.
func TestMicro_RequestsCountedAndTimed(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	var begun serve.TurnStep
	microCall(t, nc, "turns.begin", serve.BeginRequest{Session: "s1"}, &begun)
	microCall(t, nc, "turns.outcome", map[string]any{"turn_id": "nope", "attempt": 1, "ok": true}, nil)
	microCall(t, nc, "health", nil, nil)

	_, body := get(t, srv.url+"/metrics", "")
	fams := parseText(t, body)
	testutil.NoError(t, err)
	got := map[string]float64{}
	for _, mt := range fams["fledger_serve_micro_requests_total"].GetMetric() {
		got[label(mt, "endpoint")+" "+label(mt, "code")] = mt.GetCounter().GetValue()
	}
	want := map[string]float64{"turns.begin 200": 1, "turns.outcome 404": 1, "health 200": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("micro requests %v, want %v", got, want)
	}
	var n uint64
	for _, mt := range fams["fledger_serve_micro_request_duration_seconds"].GetMetric() {
		n += mt.GetHistogram().GetSampleCount()
	}
	if n != 3 || fams["fledger_build_info"] == nil {
		t.Errorf("micro durations %d, build info %v", n, fams["fledger_build_info"] != nil)
	}
	problems, err := promlint.New(strings.NewReader(string(body))).Lint()
	testutil.NoError(t, err)
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
