package policy

import (
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
)

func names(ch []events.Candidate) []string {
	out := make([]string, len(ch))
	for i, c := range ch {
		out[i] = c.Provider + "/" + c.Model + "@" + c.RouteOrigin
	}
	return out
}

// Reference §6 and seed 000 "Candidate chain rules".
func TestChain_Table(t *testing.T) {
	a, b, c, p := m("a", "1"), m("b", "2"), m("c", "3"), m("p", "0")
	cases := []struct {
		name      string
		requested ModelRef
		fallbacks []ModelRef
		override  bool
		want      []string
	}{
		{"requested first, fallbacks, primary appended", a, []ModelRef{b, c}, false,
			[]string{"a/1@requested", "b/2@configured-fallback", "c/3@configured-fallback", "p/0@configured-primary"}},
		{"requested is the primary: deduped", p, []ModelRef{b}, false, []string{"p/0@requested", "b/2@configured-fallback"}},
		{"dedupe first occurrence wins", a, []ModelRef{b, a, b, p}, false,
			[]string{"a/1@requested", "b/2@configured-fallback", "p/0@configured-fallback"}},
		{"override list: no primary appended", a, []ModelRef{b}, true, []string{"a/1@requested", "b/2@configured-fallback"}},
		{"override [] is strict", a, []ModelRef{}, true, []string{"a/1@requested"}},
		{"no requested model: primary first", ModelRef{}, []ModelRef{b}, false, []string{"p/0@requested", "b/2@configured-fallback"}},
		{"fallbacks tried before primary across providers", c, []ModelRef{a, b}, false,
			[]string{"c/3@requested", "a/1@configured-fallback", "b/2@configured-fallback", "p/0@configured-primary"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(BuildChain(tc.requested, tc.fallbacks, tc.override, p)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// Seed 000 "Selection source policy", one case per source.
func TestSelect_EachSource(t *testing.T) {
	cfg := testConfig()
	cfg.Agents = map[string]AgentModel{
		"strict-agent": {Primary: m("openai", "gpt-5")},
		"explicit-[]":  {Primary: m("openai", "gpt-5"), HasFallbacks: true, Fallbacks: []ModelRef{}},
		"fallback-agent": {Primary: m("openai", "gpt-5"), HasFallbacks: true,
			Fallbacks: []ModelRef{m("google", "gemini")}},
	}
	user := m("openai", "gpt-5-mini")
	cases := []struct {
		name       string
		sess       SessionState
		req        SelectRequest
		wantSource SelectionSource
		wantStrict bool
		want       []string
	}{
		{"configured default", SessionState{}, SelectRequest{}, SourceDefault, false,
			[]string{"anthropic/claude", "openai/gpt-5", "google/gemini"}},
		{"agent primary without fallbacks is strict", SessionState{}, SelectRequest{Agent: "strict-agent"}, SourceAgent, true,
			[]string{"openai/gpt-5"}},
		{"agent fallbacks: [] is strict", SessionState{}, SelectRequest{Agent: "explicit-[]"}, SourceAgent, true, []string{"openai/gpt-5"}},
		{"agent with own fallbacks", SessionState{}, SelectRequest{Agent: "fallback-agent"}, SourceAgent, false,
			[]string{"openai/gpt-5", "google/gemini"}},
		{"user override is strict", SessionState{Model: user, Source: SourceUser}, SelectRequest{}, SourceUser, true,
			[]string{"openai/gpt-5-mini"}},
		{"legacy override (no source) is strict", SessionState{Model: user}, SelectRequest{}, SourceLegacy, true,
			[]string{"openai/gpt-5-mini"}},
		{"explicit default source follows default policy", SessionState{Model: user, Source: SourceDefault}, SelectRequest{}, SourceDefault, false,
			[]string{"anthropic/claude", "openai/gpt-5", "google/gemini"}},
		{"cron payload uses configured fallbacks", SessionState{Model: user, Source: SourceUser},
			SelectRequest{Cron: &CronPayload{Model: m("google", "gemini")}}, SourceCron, false,
			[]string{"google/gemini", "openai/gpt-5", "anthropic/claude"}},
		{"cron payload.fallbacks [] is strict", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true}},
			SourceCron, true, []string{"google/gemini"}},
		{"cron payload.fallbacks override", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true,
			Fallbacks: []ModelRef{m("openai", "gpt-5")}}}, SourceCron, false, []string{"google/gemini", "openai/gpt-5"}},
		{"stored auto override walks the configured chain", SessionState{Model: m("openai", "gpt-5"), Source: SourceAuto, Origin: m("anthropic", "claude")},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 299999}, SourceAuto, false,
			[]string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"stored auto override probes its origin every 5 min", SessionState{Model: m("openai", "gpt-5"), Source: SourceAuto, Origin: m("anthropic", "claude")},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 300000}, SourceAuto, false,
			[]string{"anthropic/claude", "openai/gpt-5", "google/gemini"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := cfg.Select(tc.sess, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range sel.Chain {
				got = append(got, c.Provider+"/"+c.Model)
			}
			if sel.Source != tc.wantSource || sel.Strict != tc.wantStrict || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %s strict=%v %v\nwant %s strict=%v %v", sel.Source, sel.Strict, got, tc.wantSource, tc.wantStrict, tc.want)
			}
			if sel.Requested.Provider != sel.Chain[0].Provider || sel.Requested.Model != sel.Chain[0].Model {
				t.Fatal("requested is not chain[0]")
			}
		})
	}
	if _, err := DefaultConfig().Select(SessionState{}, SelectRequest{}); err != ErrNoModel {
		t.Fatalf("err = %v", err)
	}
}

func TestSession_PinsLifecycle(t *testing.T) {
	cfg := testConfig()
	fold := func(s SessionState, ps []events.Payload) SessionState {
		for _, p := range ps {
			s = EvolveSession(s, p)
		}
		return s
	}
	s := SessionState{Session: "s"}
	s = fold(s, []events.Payload{events.SessionAuthPinned{Session: "s", ProfileID: "anthropic:a", Provider: "anthropic", Source: string(PinAuto)}})
	// Compaction clears an auto pin (seed 000), unless the OpenClaw switch.
	if got := fold(s, cfg.CompleteCompaction(s, "s")); got.Pin != "" || got.CompactionCount != 1 {
		t.Fatalf("auto pin after compaction: %+v", got)
	}
	keep := cfg.Params
	keep.AutoPinSurvivesCompaction = true
	if got := fold(s, keep.CompleteCompaction(s, "s")); got.Pin != "anthropic:a" {
		t.Fatal("switch ignored")
	}
	if got := fold(s, ResetSession(s, "s", "new")); got.Pin != "" {
		t.Fatal("auto pin survived /new")
	}
	// A user pin survives /new, /reset, compaction.
	ps, err := cfg.PinProfile(s, "s", "anthropic:b")
	if err != nil {
		t.Fatal(err)
	}
	u := fold(s, ps)
	if u.Pin != "anthropic:b" || u.PinSource != PinUser {
		t.Fatalf("%+v", u)
	}
	u = fold(u, ResetSession(u, "s", "reset"))
	u = fold(u, cfg.CompleteCompaction(u, "s"))
	if u.Pin != "anthropic:b" {
		t.Fatal("user pin lost")
	}
	// Selecting a model of another provider clears it.
	sel, _ := SelectModel(u, "s", m("openai", "gpt-5"), SourceUser, nil)
	if got := fold(u, sel); got.Pin != "" || got.Model != m("openai", "gpt-5") {
		t.Fatalf("%+v", got)
	}
	// /model default keeps a compatible pin.
	if got := fold(u, cfg.ClearModel(u, "s", "")); got.Pin != "anthropic:b" {
		t.Fatal("compatible pin cleared")
	}
	if _, err := cfg.PinProfile(u, "s", "nope"); err == nil {
		t.Fatal("unknown profile pinned")
	}
	// A pin whose profile disappeared is cleared at turn start.
	gone := u
	gone.Pin, gone.PinProvider = "anthropic:zzz", "anthropic"
	if got := fold(gone, cfg.ReconcilePin(gone, "s")); got.Pin != "" {
		t.Fatal("stale pin kept")
	}
	// Reset clears a stored auto override.
	a := fold(SessionState{}, []events.Payload{events.SessionModelSelected{Session: "s", Model: m("openai", "gpt-5"), Source: string(SourceAuto)}})
	if got := fold(a, ResetSession(a, "s", "reset")); got.Model != (ModelRef{}) {
		t.Fatal("auto override survived reset")
	}
}

// ---- chain (reference §6) ----

func TestChain_ReferenceCases(t *testing.T) {
	p := m("p", "0")
	cases := []struct {
		name      string
		requested ModelRef
		fallbacks []ModelRef
		override  bool
		want      []string
	}{
		{"configured chain with the primary as a fallback: no second primary", m("a", "1"), []ModelRef{p, m("b", "2")}, false,
			[]string{"a/1@requested", "p/0@configured-fallback", "b/2@configured-fallback"}},
		{"same model on two providers is not a duplicate", m("a", "x"), []ModelRef{m("b", "x")}, false,
			[]string{"a/x@requested", "b/x@configured-fallback", "p/0@configured-primary"}},
		{"override nil list behaves as []: strict", m("a", "1"), nil, true, []string{"a/1@requested"}},
		{"zero entries dropped", m("a", "1"), []ModelRef{{}, {Provider: "b"}, m("c", "3")}, false,
			[]string{"a/1@requested", "c/3@configured-fallback", "p/0@configured-primary"}},
		{"override that repeats the requested model", m("a", "1"), []ModelRef{m("a", "1")}, true, []string{"a/1@requested"}},
		{"no fallbacks, no override: requested then primary", m("a", "1"), nil, false, []string{"a/1@requested", "p/0@configured-primary"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(BuildChain(tc.requested, tc.fallbacks, tc.override, p)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
