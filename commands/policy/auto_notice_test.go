package policy

import (
	"slices"
	"testing"
)

// A session on a stored auto override (openai/gpt-5, fallen back from
// anthropic/claude, the override's origin), whose last probe of the
// origin failed over and set the notice state (claude → gpt-5): the next
// turn, within the probe interval, answers on the override's model.
// Revision 5 read that as the fallback cleared (and the next probe as a
// new fallback: the notices flapped every 5 minutes); revision 6 keeps
// the origin as the selected model, so nothing changed and nothing is
// sent. The origin's recovery, a probe it answers, is announced as the
// fallback cleared under both.
func TestNotices_StoredAutoOverrideKeepsItsOriginSelected(t *testing.T) {
	claude, gpt := m("anthropic", "claude"), m("openai", "gpt-5")
	onOverride := SessionState{Session: "s1", Model: gpt, Source: SourceAuto, Origin: claude,
		Notice: NoticeState{Selected: "anthropic/claude", Active: "openai/gpt-5", Reason: "overloaded"}}
	for _, tc := range []struct {
		name       string
		rules      Rules
		probeAgo   int64 // ms since the last probe of the origin
		originOK   bool
		wantNotice string
	}{
		{"revision 5, override's own turn", RulesV5, 60_000, false, "↪️ Model Fallback cleared: openai/gpt-5"},
		{"revision 6, override's own turn", RulesV6, 60_000, false, ""},
		{"revision 6, probe fails over again", RulesV6, 300_000, false, ""},
		{"revision 6, the origin recovers", RulesV6, 300_000, true, "↪️ Model Fallback cleared: anthropic/claude (was openai/gpt-5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries = 0
			h := newHarness(t, cfg)
			h.sess = onOverride
			sel, err := h.cfg.Select(h.sess, SelectRequest{Now: h.now, LastAutoProbeAt: h.now - tc.probeAgo})
			if err != nil {
				t.Fatal(err)
			}
			n := h.apply(StartTurn(sel, h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: tc.rules}))
			for n.Kind == NextCall && n.Call.Provider == "anthropic" && !tc.originOK {
				n = h.outcome(failed(ReasonOverloaded))
			}
			if n.Kind == NextCall {
				n = h.outcome(Outcome{OK: true})
			}
			got := noticeTexts(n)
			want := gpt
			if tc.originOK {
				want = claude
			}
			if n.AnsweredBy != want {
				t.Fatalf("answered by %s, want %s", n.AnsweredBy, want)
			}
			if got != tc.wantNotice {
				t.Fatalf("notices %q, want %q (answered by %s)", got, tc.wantNotice, n.AnsweredBy)
			}
		})
	}
}

// Revision 6, turns of a stored auto override (gpt-5, origin claude,
// chain gpt-5 → gemini → claude) between probes: one that falls back to
// gemini announces it; the next, answered on the override again,
// announces gpt-5 with the reason the fallback began (not an empty one);
// one that falls all the way back to the origin changes nothing (the
// override stays stored: only a probe the origin answers clears it).
func TestNotices_StoredAutoOverrideTurnsBetweenProbes(t *testing.T) {
	claude, gpt := m("anthropic", "claude"), m("openai", "gpt-5")
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	h.sess = SessionState{Session: "s1", Model: gpt, Source: SourceAuto, Origin: claude,
		Notice: NoticeState{Selected: "anthropic/claude", Active: "openai/gpt-5", Reason: "overloaded"}}
	turn := func(failing ...string) (string, ModelRef) {
		t.Helper()
		h.profiles = map[string]ProfileState{}
		sel, err := h.cfg.Select(h.sess, SelectRequest{Now: h.now, LastAutoProbeAt: h.now - 60_000})
		if err != nil || sel.AutoOriginProbe {
			t.Fatalf("select: %+v, %v; want a turn on the override", sel, err)
		}
		n := h.apply(StartTurn(sel, h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: RulesV6}))
		for n.Kind == NextCall && slices.Contains(failing, n.Call.Provider) {
			n = h.outcome(failed(ReasonOverloaded))
		}
		if n.Kind == NextCall {
			n = h.outcome(Outcome{OK: true})
		}
		return noticeTexts(n), n.AnsweredBy
	}
	for i, step := range []struct {
		failing []string
		answer  string
		notice  string
	}{
		{[]string{"openai"}, "google/gemini", "↪️ Model Fallback: google/gemini (selected anthropic/claude; overloaded)"},
		{nil, "openai/gpt-5", "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; overloaded)"},
		{[]string{"openai", "google"}, "anthropic/claude", ""},
		{nil, "openai/gpt-5", ""},
	} {
		notice, answered := turn(step.failing...)
		if answered.String() != step.answer || notice != step.notice {
			t.Fatalf("turn %d: answered by %s, notices %q; want %s, %q", i+1, answered, notice, step.answer, step.notice)
		}
	}
	if h.sess.Model != gpt || h.sess.Source != SourceAuto {
		t.Fatalf("the override was cleared: %+v", h.sess)
	}
}

// noticeTexts is the texts of n's notices, joined.
func noticeTexts(n Next) string {
	var s string
	for _, no := range n.Notices {
		s += no.Text
	}
	return s
}
