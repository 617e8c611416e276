package serve_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// With session maintenance on, serve prunes the sessions idle for
// longer than the age in the background: s-idle's last activity is at
// T0, s-busy's a day before the pass; the pass at T0+31d prunes s-idle
// only, and /metrics counts it.
func TestServe_SessionMaintenancePrunesIdleSessions(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, _ := defaultServer(t, clock, func(c *serve.Config) {
		c.SessionMaintenance = &serve.SessionMaintenance{PruneAfter: 30 * 24 * time.Hour, Every: 20 * time.Millisecond}
	})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/turns", `{"session":"s-idle","turn_id":"t1"}`},
		{"POST", "/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`},
	} {
		if status, b := do(t, c.method, srv.url+c.path, c.body); status != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, b)
		}
	}
	clock.Advance(30 * 24 * time.Hour)
	if status, b := do(t, "POST", srv.url+"/v1/sessions/main/s-busy/model", `{"model":"openai/gpt-5"}`); status != 200 {
		t.Fatalf("model: %d %s", status, b)
	}
	clock.Advance(24 * time.Hour)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := get(t, srv.url+"/metrics", "")
		fams := parseText(t, body)
		if f := fams["fledger_engine_sessions_pruned_total"]; f != nil && len(f.GetMetric()) == 1 && f.GetMetric()[0].GetCounter().GetValue() == 1 {
			if g := fams["fledger_engine_sessions"].GetMetric()[0].GetGauge().GetValue(); g != 1 {
				t.Fatalf("sessions held after the prune: %v, want 1 (s-busy)", g)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session pruned in 10 s; metrics:\n%s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status, b := do(t, "GET", srv.url+"/v1/sessions/main/s-busy", ""); status != 200 || !bytes.Contains(b, []byte("gpt-5")) {
		t.Fatalf("s-busy after maintenance: %d %s", status, b)
	}
}

func TestServe_SessionMaintenanceRefusesBadAge(t *testing.T) {
	for _, m := range []serve.SessionMaintenance{{}, {PruneAfter: time.Microsecond}, {PruneAfter: time.Hour, Every: -time.Second}} {
		if err := m.Check(); err == nil {
			t.Errorf("%+v: accepted", m)
		}
	}
}
