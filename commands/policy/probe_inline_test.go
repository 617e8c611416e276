package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Seed 000 "Billing disables": "Configured inline API keys cannot retry
// during an active disable window. After the window expires, they become
// eligible again … Stored auth profiles can also recover through bounded
// primary-provider probes during a disable window." POLICY: "Configured
// inline API keys are never probed during an active disable window; only
// stored auth profiles recover through bounded primary probes".
// Revision 1 probed the inline key near the end of its window.
func TestProbeInline_InlineKeyNotProbedDuringItsDisable(t *testing.T) {
	cases := []struct {
		name      string
		rules     Rules
		strict    bool // the primary alone: probed whatever the expiry
		stored    bool // a stored profile of the provider is disabled too
		wantCall  string
		wantModel string
		wantKind  AttemptKind
	}{
		{"revision 1: the inline key is probed near expiry", RulesV1, false, false, "google:inline", "gemini", KindProbe},
		{"revision 2: suspended, the next candidate called", RulesV2, false, false, "openai:user", "gpt-5", KindFallback},
		{"revision 2: a stored profile of the provider is probed", RulesV2, false, true, "google:stored", "gemini", KindProbe},
		{"revision 2: a single candidate is not probed either", RulesV2, true, false, "", "", ""},
		{"revision 1: a single candidate is probed", RulesV1, true, false, "google:inline", "gemini", KindProbe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Defaults = Models{Primary: m("google", "gemini"), Fallbacks: []ModelRef{m("openai", "gpt-5")}}
			if tc.strict {
				cfg.Defaults.Fallbacks = []ModelRef{}
			}
			h := newHarness(t, cfg)
			// The billing disable ends in 60 s: near expiry (2 min margin).
			h.profiles["google:inline"] = ProfileState{DisabledUntil: t0 + 60000, DisabledReason: ReasonBilling, ErrorCount: 1,
				FailureCounts: map[string]int{ReasonBilling: 1}, LastFailureAt: t0 - 540000}
			if tc.stored {
				// Profiles are sorted by id (Config.Profile searches them).
				h.cfg.Profiles = append(h.cfg.Profiles[:3:3], append([]Profile{{ID: "google:stored", Provider: "google", Type: ProfileAPIKey}}, h.cfg.Profiles[3:]...)...)
				h.profiles["google:stored"] = ProfileState{DisabledUntil: t0 + 90000, DisabledReason: ReasonBilling, ErrorCount: 1,
					FailureCounts: map[string]int{ReasonBilling: 1}, LastFailureAt: t0 - 510000}
			}
			n := h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			if tc.wantCall == "" {
				if n.Kind != NextExhausted || !n.RawError || n.Summary != "Provider google is in cooldown" {
					t.Fatalf("%+v", n)
				}
				return
			}
			provider := "google"
			if tc.wantModel == "gpt-5" {
				provider = "openai"
				cs := h.payloads("CandidateSkipped")[0].(events.CandidateSkipped)
				if cs.Decision != "suspend" || cs.Message != "Provider google is in cooldown" {
					t.Fatalf("%+v", cs)
				}
			}
			wantCall(t, n, provider, tc.wantModel, tc.wantCall, tc.wantKind)
		})
	}
}
