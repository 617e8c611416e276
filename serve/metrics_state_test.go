package serve_test

import (
	"fmt"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// /metrics exports what each engine's memory grows with, by agent: the
// sessions it holds (a session is held once an event or a turn of it
// was folded: s1 and s2), the turns begun and not finished,
// the finished turns kept, and the subjects whose last sequence guards
// its next append.
func TestHTTP_MetricsEngineState(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/turns", `{"session":"s1","turn_id":"t1"}`},
		{"POST", "/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`},
		{"POST", "/v1/turns", `{"session":"s2","turn_id":"t2"}`},
		{"POST", "/v1/turns", `{"session":"s1","turn_id":"t3"}`},
	} {
		if status, b := do(t, c.method, srv.url+c.path, c.body); status != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, status, b)
		}
	}
	_, body := get(t, srv.url+"/metrics", "")
	fams := parseText(t, body)
	got := map[string]string{}
	for _, name := range []string{"fledger_engine_sessions", "fledger_engine_open_turns", "fledger_engine_finished_turns", "fledger_engine_subject_sequences"} {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		m := f.GetMetric()[0]
		got[name] = fmt.Sprintf("%s=%v", label(m, "agent"), m.GetGauge().GetValue())
	}
	want := map[string]string{
		"fledger_engine_sessions":       "main=2",
		"fledger_engine_open_turns":     "main=2",
		"fledger_engine_finished_turns": "main=1",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	// The config's subject, the three turns' and the one t1's success
	// was stored under.
	if s := got["fledger_engine_subject_sequences"]; s != "main=5" {
		t.Errorf("subject sequences: %s, want main=5", s)
	}
}
