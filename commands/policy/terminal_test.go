package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Seed 003 "Which errors advance fallback": "The ones that do not advance
// … Format and invalid-request errors are usually terminal — resending
// the same payload would fail identically, so OpenClaw surfaces them
// instead of rotating auth profiles" (seed 000 "Cooldowns" says the
// same). OpenClaw 2026.9.6 advances (reference §12): the switch
// failover.formatAdvances. Revision 1 always advanced.
func TestTerminal_FormatErrorStopsWithTheProvidersError(t *testing.T) {
	cases := []struct {
		name     string
		rules    Rules
		advances bool // failover.formatAdvances
		err      events.ProviderErrorRecord
		wantStop string // the message surfaced; "" = the turn advances
	}{
		{"revision 1: advances", RulesV1, false, events.ProviderErrorRecord{MessagePreview: "invalid request format"}, ""},
		{"revision 2: stops with the provider's message", RulesV2, false,
			events.ProviderErrorRecord{Status: 400, MessagePreview: "invalid request format"}, "invalid request format"},
		{"revision 2: a body-only error surfaces its body", RulesV2, false,
			events.ProviderErrorRecord{Status: 422, BodyPreview: `{"error":"Unprocessable Entity"}`}, `{"error":"Unprocessable Entity"}`},
		{"revision 2 with formatAdvances: advances", RulesV2, true, events.ProviderErrorRecord{MessagePreview: "invalid request format"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.FormatAdvances = tc.advances
			h := newHarness(t, cfg)
			h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			n := h.outcome(Outcome{Reason: ReasonFormat, Status: tc.err.Status, Error: tc.err})
			if tc.wantStop == "" {
				wantCall(t, n, "openai", "gpt-5", "openai:user", KindFallback)
				return
			}
			ts := h.payloads("TurnStopped")
			if n.Kind != NextStop || n.Disposition != DispositionFailover || n.Reason != ReasonFormat || n.Message != tc.wantStop || len(ts) != 1 {
				t.Fatalf("%+v", n)
			}
			// No rotation, no fallback, no decision record, no health.
			if len(h.payloads("FallbackStepped")) != 0 || len(h.payloads("ProfileFailureRecorded")) != 0 || len(h.payloads("AttemptStarted")) != 1 {
				t.Fatalf("log %+v", h.log)
			}
			if e := ts[0].(events.TurnStopped); e.Message != tc.wantStop || e.Attempts != 1 || e.Reason != ReasonFormat {
				t.Fatalf("%+v", e)
			}
		})
	}
}

// Seed 000 "Which errors advance fallback", "Does not continue on": "a
// final unknown error when there are no candidates left"; reference §7
// step 7.7: "Not a known failover and no next candidate → throw the raw
// error". POLICY "Where a turn ends": an unrecognized error (unclassified,
// unknown) on the last candidate is surfaced as it is, not an exhaustion
// summary; the attempts are still recorded. Revision 1 exhausted on a
// final unclassified error ("All models failed (2): …").
func TestTerminal_FinalUnrecognizedErrorSurfacesAsItIs(t *testing.T) {
	cases := []struct {
		name   string
		rules  Rules
		reason string
		chain  []ModelRef // fallbacks after anthropic/claude
		want   NextKind
	}{
		{"revision 1: a final unclassified error exhausts", RulesV1, ReasonUnclassified, []ModelRef{m("openai", "gpt-5")}, NextExhausted},
		{"revision 2: a final unclassified error stops", RulesV2, ReasonUnclassified, []ModelRef{m("openai", "gpt-5")}, NextStop},
		{"revision 1: a final unknown error stops", RulesV1, ReasonUnknown, []ModelRef{m("openai", "gpt-5")}, NextStop},
		{"revision 2: a final unknown error stops", RulesV2, ReasonUnknown, []ModelRef{m("openai", "gpt-5")}, NextStop},
		{"revision 2: with a candidate left it advances", RulesV2, ReasonUnclassified, []ModelRef{m("openai", "gpt-5"), m("google", "gemini")}, NextCall},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries = 0
			cfg.Defaults.Fallbacks = tc.chain
			h := newHarness(t, cfg)
			h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			wantCall(t, h.outcome(failed(ReasonServerError)), "openai", "gpt-5", "openai:user", KindFallback)
			msg := "weird upstream failure\nline two"
			n := h.outcome(Outcome{Reason: tc.reason, Error: events.ProviderErrorRecord{MessagePreview: msg}})
			if n.Kind != tc.want {
				t.Fatalf("%+v", n)
			}
			switch n.Kind {
			case NextStop:
				ts := h.payloads("TurnStopped")[0].(events.TurnStopped)
				if n.Disposition != DispositionFailover || n.Reason != tc.reason || n.Message != msg || ts.Attempts != 2 || len(h.payloads("AttemptFailed")) != 2 {
					t.Fatalf("%+v %+v", n, ts)
				}
			case NextExhausted:
				if n.RawError || len(n.Attempts) != 2 || n.Summary[:len("All models failed (2): ")] != "All models failed (2): " {
					t.Fatalf("%+v", n)
				}
			}
		})
	}
}
