package policy

import (
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
)

// ---- selection sources (seed 000 "Selection source policy") ----

func TestSelect_EverySource(t *testing.T) {
	cfg := testConfig()
	cfg.Agents = map[string]AgentModel{
		"strict":   {Primary: m("openai", "gpt-5")},
		"empty":    {Primary: m("openai", "gpt-5"), HasFallbacks: true, Fallbacks: []ModelRef{}},
		"own":      {Primary: m("openai", "gpt-5"), HasFallbacks: true, Fallbacks: []ModelRef{m("google", "gemini"), m("anthropic", "claude")}},
		"fallback": {HasFallbacks: true, Fallbacks: []ModelRef{m("google", "gemini")}},
	}
	user, auto, origin := m("openai", "gpt-5-mini"), m("openai", "gpt-5"), m("anthropic", "claude")
	defaultChain := []string{"anthropic/claude", "openai/gpt-5", "google/gemini"}
	cases := []struct {
		name   string
		sess   SessionState
		req    SelectRequest
		source SelectionSource
		strict bool
		probe  bool
		want   []string
	}{
		{"default", SessionState{}, SelectRequest{}, SourceDefault, false, false, defaultChain},
		{"agent primary without fallbacks: strict", SessionState{}, SelectRequest{Agent: "strict"}, SourceAgent, true, false, []string{"openai/gpt-5"}},
		{"agent primary with fallbacks: []: strict", SessionState{}, SelectRequest{Agent: "empty"}, SourceAgent, true, false, []string{"openai/gpt-5"}},
		{"agent primary with own fallbacks", SessionState{}, SelectRequest{Agent: "own"}, SourceAgent, false, false,
			[]string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"agent with fallbacks but no primary: the default primary, its fallbacks", SessionState{}, SelectRequest{Agent: "fallback"}, SourceDefault, false, false,
			[]string{"anthropic/claude", "google/gemini"}},
		{"unknown agent: default", SessionState{}, SelectRequest{Agent: "nobody"}, SourceDefault, false, false, defaultChain},
		{"stored default source on a strict agent stays strict", SessionState{Model: user, Source: SourceDefault}, SelectRequest{Agent: "strict"}, SourceAgent, true, false,
			[]string{"openai/gpt-5"}},
		{"cron payload: configured fallbacks, primary appended", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini")}}, SourceCron, false, false,
			[]string{"google/gemini", "openai/gpt-5", "anthropic/claude"}},
		{"cron payload.fallbacks: exactly those", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true, Fallbacks: []ModelRef{user}}},
			SourceCron, false, false, []string{"google/gemini", "openai/gpt-5-mini"}},
		{"cron payload.fallbacks: []: strict", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true}},
			SourceCron, true, false, []string{"google/gemini"}},
		{"cron payload is not a user override: wins over a stored user selection", SessionState{Model: user, Source: SourceUser},
			SelectRequest{Cron: &CronPayload{Model: m("google", "gemini")}}, SourceCron, false, false, []string{"google/gemini", "openai/gpt-5", "anthropic/claude"}},
		{"cron payload with no model: the session's selection", SessionState{Model: user, Source: SourceUser}, SelectRequest{Cron: &CronPayload{}},
			SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"auto before 5 min: the auto model with the configured chain", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 299999}, SourceAuto, false, false, []string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"auto at 5 min: probe the origin first", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 300000}, SourceAuto, false, true, defaultChain},
		{"auto never probed: probe now", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0}, SourceAuto, false, true, defaultChain},
		{"auto without a known origin: no probe", SessionState{Model: auto, Source: SourceAuto},
			SelectRequest{Now: t0}, SourceAuto, false, false, []string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"user: strict", SessionState{Model: user, Source: SourceUser}, SelectRequest{}, SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"user beats an agent primary", SessionState{Model: user, Source: SourceUser}, SelectRequest{Agent: "own"}, SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"legacy without source: strict", SessionState{Model: user}, SelectRequest{}, SourceLegacy, true, false, []string{"openai/gpt-5-mini"}},
		{"legacy source: strict", SessionState{Model: user, Source: SourceLegacy}, SelectRequest{}, SourceLegacy, true, false, []string{"openai/gpt-5-mini"}},
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
			if sel.Source != tc.source || sel.Strict != tc.strict || sel.AutoOriginProbe != tc.probe || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %s strict=%v probe=%v %v\nwant %s strict=%v probe=%v %v",
					sel.Source, sel.Strict, sel.AutoOriginProbe, got, tc.source, tc.strict, tc.probe, tc.want)
			}
		})
	}
}

// A stored auto override: cleared when its probed origin answers, kept
// when the origin fails and a fallback answers, cleared by /new and
// /reset; a user override survives them.
func TestSelect_AutoOverrideLifecycle(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	origin := m("anthropic", "claude")
	stored := func() SessionState {
		ps, err := SelectModel(SessionState{}, "s1", m("openai", "gpt-5"), SourceAuto, &origin)
		if err != nil {
			t.Fatal(err)
		}
		return fold(SessionState{Session: "s1"}, ps)
	}
	// Origin fails: the override stays.
	h := newHarness(t, cfg)
	h.sess = stored()
	sel, _ := cfg.Select(h.sess, SelectRequest{Now: t0})
	h.start(sel, "direct")
	h.outcome(failed(ReasonAuth))
	h.outcome(failed(ReasonAuth))
	if n := h.outcome(Outcome{OK: true}); n.AnsweredBy != m("openai", "gpt-5") || h.sess.Model != m("openai", "gpt-5") || h.sess.Source != SourceAuto {
		t.Fatalf("%+v %+v", n, h.sess)
	}
	// Origin answers: cleared (auto_recovered); the next turn is default.
	h = newHarness(t, cfg)
	h.sess = stored()
	sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0})
	h.start(sel, "direct")
	h.outcome(Outcome{OK: true})
	cl := h.payloads("SessionModelCleared")
	if len(cl) != 1 || cl[0].(events.SessionModelCleared).Cause != "auto_recovered" || h.sess.Model != (ModelRef{}) {
		t.Fatalf("%+v %+v", cl, h.sess)
	}
	if sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0}); sel.Source != SourceDefault {
		t.Fatalf("%+v", sel)
	}
	// An answer from the origin in a non-probe turn does not clear it.
	h = newHarness(t, cfg)
	h.sess = stored()
	sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0, LastAutoProbeAt: t0})
	h.start(sel, "direct")
	h.outcome(Outcome{OK: true})
	if len(h.payloads("SessionModelCleared")) != 0 {
		t.Fatal("cleared without a probe")
	}
	for _, kind := range []string{"new", "reset"} {
		s := stored()
		if got := fold(s, ResetSession(s, "s1", kind)); got.Model != (ModelRef{}) || got.Source != "" {
			t.Fatalf("/%s kept the auto override: %+v", kind, got)
		}
		u := fold(SessionState{Session: "s1"}, []events.Payload{events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: string(SourceUser)}})
		if got := fold(u, ResetSession(u, "s1", kind)); got.Model != m("openai", "gpt-5") {
			t.Fatalf("/%s cleared a user override", kind)
		}
	}
}
