package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// incidentDay runs fixtures/scenarios/incident-day.yaml into a fresh store
// and returns it with the scenario's start time.
func incidentDay(t *testing.T, ctx context.Context) (events.Store, time.Time) {
	t.Helper()
	st, _ := testutil.OpenStore(t)
	sc, err := scenario.LoadFile(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	testutil.NoError(t, err)
	_, err = scenario.Run(ctx, st, sc, scenario.Options{Agent: "main"})
	testutil.NoError(t, err)
	return st, sc.Start
}

// scrape GETs /metrics and parses it with the Prometheus text parser into
// "name{l1=v1,l2=v2}" → value (labels sorted; histograms as _count/_sum).
func scrape(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	testutil.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	testutil.NoError(t, err)
	out := map[string]float64{}
	for name, f := range fams {
		for _, mt := range f.GetMetric() {
			key := name + labels(mt.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = mt.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = mt.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[name+"_count"+labels(mt.GetLabel())] = float64(mt.GetHistogram().GetSampleCount())
				out[name+"_sum"+labels(mt.GetLabel())] = mt.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func labels(ls []*dto.LabelPair) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// only returns the series of got whose name starts with prefix.
func only(got map[string]float64, prefix string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range got {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

func expectSeries(t *testing.T, got map[string]float64, prefix string, want map[string]float64) {
	t.Helper()
	g := only(got, prefix)
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s series:\n got %v\nwant %v", prefix, g, want)
	}
}

// After the incident-day scenario (a rate-limit storm that falls back to
// openai/gpt-5, then a billing disable of anthropic:work), the counters
// say exactly what happened.
func TestMetrics_CountsAfterIncidentDay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, start := incidentDay(t, ctx)
	m := New(WithStore(st), WithClock(func() time.Time { return start.Add(20 * time.Minute) }))
	testutil.NoError(t, m.CatchUp(ctx, st))
	got := scrape(t, m)

	expectSeries(t, got, "fledger_attempts_total", map[string]float64{
		"fledger_attempts_total{agent=main,model=claude-opus-4-6,outcome=failed,profile=anthropic:personal,provider=anthropic,reason=rate_limit}": 1,
		"fledger_attempts_total{agent=main,model=claude-opus-4-6,outcome=failed,profile=anthropic:work,provider=anthropic,reason=billing}":        1,
		"fledger_attempts_total{agent=main,model=claude-opus-4-6,outcome=failed,profile=anthropic:work,provider=anthropic,reason=rate_limit}":     4,
		"fledger_attempts_total{agent=main,model=claude-opus-4-6,outcome=succeeded,profile=anthropic:personal,provider=anthropic,reason=}":        2,
		"fledger_attempts_total{agent=main,model=claude-opus-4-6,outcome=succeeded,profile=anthropic:work,provider=anthropic,reason=}":            2,
		"fledger_attempts_total{agent=main,model=gpt-5,outcome=succeeded,profile=openai:user@example.com,provider=openai,reason=}":                1,
	})
	expectSeries(t, got, "fledger_fallback_decisions_total", map[string]float64{
		"fledger_fallback_decisions_total{agent=main,decision=candidate_failed,provider=anthropic,reason=rate_limit}": 1,
		"fledger_fallback_decisions_total{agent=main,decision=candidate_succeeded,provider=openai,reason=}":           1,
	})
	expectSeries(t, got, "fledger_fallback_steps_total", map[string]float64{
		"fledger_fallback_steps_total{agent=main,outcome=next_fallback}": 1,
		"fledger_fallback_steps_total{agent=main,outcome=succeeded}":     1,
	})
	expectSeries(t, got, "fledger_turns_total", map[string]float64{
		"fledger_turns_total{agent=main,outcome=succeeded,reason=}": 5,
	})
	// At the end every window is over: the storm's cooldowns and the
	// billing disable were cleared by later successes.
	expectSeries(t, got, "fledger_profiles_disabled", map[string]float64{})
	expectSeries(t, got, "fledger_profiles_in_cooldown", map[string]float64{})
	expectSeries(t, got, "fledger_profile_", map[string]float64{})
	expectSeries(t, got, "fledger_profiles{", map[string]float64{
		"fledger_profiles{provider=anthropic}": 2,
		"fledger_profiles{provider=openai}":    1,
	})
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	expectSeries(t, got, "fledger_projection_", map[string]float64{
		"fledger_projection_applied_sequence{projection=metrics}": float64(last),
		"fledger_projection_lag_events{projection=metrics}":       0,
		"fledger_projection_lag_seconds{projection=metrics}":      0,
		"fledger_projection_stalled_seconds{projection=metrics}":  0,
	})
	expectSeries(t, got, "fledger_stream_last_sequence", map[string]float64{"fledger_stream_last_sequence{}": float64(last)})
	expectSeries(t, got, "fledger_append_duration_seconds_count", map[string]float64{
		"fledger_append_duration_seconds_count{}": 0,
	})
}

// foldUntil folds the events of st decided at or before until, starting
// after m's last folded sequence.
func foldUntil(t *testing.T, ctx context.Context, st events.Store, m *Metrics, until time.Time) {
	t.Helper()
	for ev, err := range st.Read(ctx, m.Applied()+1) {
		testutil.NoError(t, err)
		if ev.At.After(until) {
			break
		}
		m.Apply(ev)
	}
}

// The gauges follow the profiles' windows through the scenario: after the
// storm (+30 s) both anthropic profiles cool down for rate_limit; at +10m
// anthropic:work is disabled for billing until +15m0.3s; the lag metrics
// show how far behind the fold is meanwhile.
func TestMetrics_CooldownAndDisabledGaugesMidStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, start := incidentDay(t, ctx)
	now := start.Add(30 * time.Second)
	m := New(WithStore(st), WithClock(func() time.Time { return now }))
	foldUntil(t, ctx, st, m, now)
	got := scrape(t, m)
	expectSeries(t, got, "fledger_profiles_in_cooldown", map[string]float64{
		"fledger_profiles_in_cooldown{provider=anthropic,reason=rate_limit}": 2,
	})
	expectSeries(t, got, "fledger_profile_cooldown_remaining_seconds", map[string]float64{
		"fledger_profile_cooldown_remaining_seconds{agent=main,model=claude-opus-4-6,profile=anthropic:work,provider=anthropic,reason=rate_limit}":     8.842,
		"fledger_profile_cooldown_remaining_seconds{agent=main,model=claude-opus-4-6,profile=anthropic:personal,provider=anthropic,reason=rate_limit}": 9.262,
	})
	expectSeries(t, got, "fledger_profiles_disabled", map[string]float64{})
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	if lag := got["fledger_projection_lag_events{projection=metrics}"]; lag != float64(last-m.Applied()) || lag == 0 {
		t.Errorf("lag %v events, want %d", lag, last-m.Applied())
	}
	if got["fledger_projection_lag_seconds{projection=metrics}"] <= 0 {
		t.Errorf("lag seconds %v while behind", got["fledger_projection_lag_seconds{projection=metrics}"])
	}

	now = start.Add(10 * time.Minute)
	foldUntil(t, ctx, st, m, now)
	got = scrape(t, m)
	expectSeries(t, got, "fledger_profiles_disabled", map[string]float64{
		"fledger_profiles_disabled{provider=anthropic,reason=billing}": 1,
	})
	expectSeries(t, got, "fledger_profile_disabled_remaining_seconds", map[string]float64{
		"fledger_profile_disabled_remaining_seconds{agent=main,profile=anthropic:work,provider=anthropic,reason=billing}": 300.3,
	})
	expectSeries(t, got, "fledger_profiles_in_cooldown", map[string]float64{})

	// Catching up folds the rest exactly once.
	testutil.NoError(t, m.CatchUp(ctx, st))
	testutil.NoError(t, m.CatchUp(ctx, st))
	got = scrape(t, m)
	if v := got["fledger_turns_total{agent=main,outcome=succeeded,reason=}"]; v != 5 {
		t.Errorf("turns after catch-up %v, want 5", v)
	}
	if v := got["fledger_projection_lag_events{projection=metrics}"]; v != 0 {
		t.Errorf("lag after catch-up %v", v)
	}
}

// The append latency histogram counts what its observer is told.
func TestMetrics_AppendLatencyHistogram(t *testing.T) {
	m := New()
	m.ObserveAppend(200 * time.Microsecond)
	m.ObserveAppend(800 * time.Microsecond)
	m.ObserveAppend(3 * time.Millisecond)
	got := scrape(t, m)
	if got["fledger_append_duration_seconds_count{}"] != 3 {
		t.Fatalf("histogram %v", only(got, "fledger_append"))
	}
	if s := got["fledger_append_duration_seconds_sum{}"]; s < 0.0039 || s > 0.0041 {
		t.Fatalf("sum %v", s)
	}
}

// Follow keeps folding commits appended after it started.
func TestMetrics_FollowSeesNewCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, _ := incidentDay(t, ctx)
	m := New(WithStore(st))
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Follow(fctx, st) }()
	sc, err := scenario.LoadFile(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	testutil.NoError(t, err)
	_, err = scenario.Run(ctx, st, sc, scenario.Options{Agent: "second"})
	testutil.NoError(t, err)
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	testutil.CheckFor(t, 20*time.Second, 10*time.Millisecond, func() error {
		if n := m.Applied(); n < last {
			return fmt.Errorf("applied through seq %d of %d", n, last)
		}
		return nil
	})
	stop()
	testutil.NoError(t, <-done)
	got := scrape(t, m)
	if v := got["fledger_turns_total{agent=main,outcome=succeeded,reason=}"] + got["fledger_turns_total{agent=second,outcome=succeeded,reason=}"]; v != 10 {
		t.Fatalf("turns %v, want 10 (two runs of incident-day)", v)
	}
}
