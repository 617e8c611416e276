package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// The provider-call histogram observes every reported latency_ms, per
// agent, provider, model and outcome; its sum is the reported total.
func TestMetrics_ProviderCallDurationFromReportedLatencies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, start := incidentDay(t, ctx)
	m := New(WithStore(st), WithClock(func() time.Time { return start.Add(20 * time.Minute) }))
	testutil.NoError(t, m.CatchUp(ctx, st))
	want := map[string]float64{} // outcome → seconds
	n := map[string]float64{}
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		switch d := ev.Data.(type) {
		case events.AttemptFailed:
			if d.LatencyMs > 0 {
				want[d.Provider+"/"+d.Model+"/failed"] += float64(d.LatencyMs) / 1000
				n[d.Provider+"/"+d.Model+"/failed"]++
			}
		case events.AttemptSucceeded:
			if d.LatencyMs > 0 {
				want[d.Provider+"/"+d.Model+"/succeeded"] += float64(d.LatencyMs) / 1000
				n[d.Provider+"/"+d.Model+"/succeeded"]++
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("incident-day reports no latency")
	}
	got := scrape(t, m)
	for k, sum := range want {
		p := strings.Split(k, "/")
		lbl := "{agent=main,model=" + p[1] + ",outcome=" + p[2] + ",provider=" + p[0] + "}"
		if c := got["fledger_provider_call_duration_seconds_count"+lbl]; c != n[k] {
			t.Errorf("%s count %v, want %v", lbl, c, n[k])
		}
		if s := got["fledger_provider_call_duration_seconds_sum"+lbl]; s < sum-1e-9 || s > sum+1e-9 {
			t.Errorf("%s sum %v, want %v", lbl, s, sum)
		}
	}
}

// fledger_build_info is 1 with version, revision and goversion labels.
func TestMetrics_BuildInfo(t *testing.T) {
	got := only(scrape(t, New()), "fledger_build_info")
	if len(got) != 1 {
		t.Fatalf("build info series %v", got)
	}
	for k, v := range got {
		if v != 1 || !strings.Contains(k, "goversion=go") || !strings.Contains(k, "revision=") || !strings.Contains(k, "version=") {
			t.Fatalf("build info %s = %v", k, v)
		}
	}
}

// A projection whose checkpoint stops while the stream is ahead shows a
// growing fledger_projection_stalled_seconds, with no traffic needed; it
// drops to 0 once the projection moves.
func TestMetrics_StalledProjection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, start := incidentDay(t, ctx)
	now := start
	var cp uint64 = 3
	m := New(WithStore(st), WithClock(func() time.Time { return now }),
		WithProjection("sqlite", func(context.Context) (uint64, error) { return cp, nil }))
	testutil.NoError(t, m.CatchUp(ctx, st))
	key := "fledger_projection_stalled_seconds{projection=sqlite}"
	if v := scrape(t, m)[key]; v != 0 {
		t.Fatalf("first scrape %v", v)
	}
	now = now.Add(10 * time.Minute)
	got := scrape(t, m)
	if v := got[key]; v != 600 {
		t.Fatalf("after 10m stuck: %v", v)
	}
	if v := got["fledger_projection_stalled_seconds{projection=metrics}"]; v != 0 {
		t.Fatalf("caught-up projection stalled %v", v)
	}
	cp = 4
	now = now.Add(time.Minute)
	if v := scrape(t, m)[key]; v != 0 {
		t.Fatalf("after moving: %v", v)
	}
	now = now.Add(time.Minute)
	if v := scrape(t, m)[key]; v != 60 {
		t.Fatalf("stuck again 1m: %v", v)
	}
}

// lint GETs h in the text format and runs promlint over the body.
func lint(t *testing.T, h http.Handler) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	testutil.NoError(t, err)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("default content type %q", ct)
	}
	problems, err := promlint.New(resp.Body).Lint()
	testutil.NoError(t, err)
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// openMetrics GETs h asking for OpenMetrics and checks it got it.
func openMetrics(t *testing.T, h http.Handler) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testutil.NoError(t, err)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(string(b), "# EOF\n") {
		t.Errorf("OpenMetrics not negotiated: %q, body ends %q", ct, b[max(len(b)-20, 0):])
	}
}

// After a scenario the fold's exposition passes promlint, and the handler
// answers an OpenMetrics Accept with OpenMetrics.
func TestMetrics_LintAndOpenMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, start := incidentDay(t, ctx)
	m := New(WithStore(st), WithProcessMetrics(), WithClock(func() time.Time { return start.Add(30 * time.Second) }),
		WithProjection("sqlite", func(context.Context) (uint64, error) { return 1, nil }))
	foldUntil(t, ctx, st, m, start.Add(30*time.Second))
	m.ObserveAppend(time.Millisecond)
	lint(t, m.Handler())
	openMetrics(t, m.Handler())
}

// Names lists every family the fold describes, including those with no
// series yet.
func TestMetrics_Names(t *testing.T) {
	names := New().Names()
	for _, n := range []string{"fledger_attempts_total", "fledger_provider_call_duration_seconds", "fledger_build_info",
		"fledger_projection_stalled_seconds", "fledger_stream_last_sequence", "fledger_profiles_disabled"} {
		if !slices.Contains(names, n) {
			t.Errorf("Names() lacks %s: %v", n, names)
		}
	}
}
