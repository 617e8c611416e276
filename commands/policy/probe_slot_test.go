package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Seed 000 "Cooldown skip vs probe": "Transient cooldown probes are
// limited to one per provider per fallback run so a single provider does
// not stall cross-provider fallback." POLICY: "a probe of the primary uses
// its provider's slot, so a sibling of the same provider is not probed
// again in that run". Revision 1 probed the primary without the slot (3
// calls where the rule allows 2); a probe that fails with format
// (model_not_found, auth, …) gives the slot back (reference §7 step 5).
func TestProbeSlot_PrimaryProbeUsesItsProvidersSlot(t *testing.T) {
	cases := []struct {
		name      string
		rules     Rules
		probeFail string
		// what follows the failed primary probe
		wantProvider, wantModel string
		wantKind                AttemptKind
		wantSkip                string
	}{
		{"revision 1: the sibling is probed too", RulesV1, ReasonUnclassified, "anthropic", "sonnet", KindProbe, ""},
		{"revision 2: the sibling is skipped, the next provider called", RulesV2, ReasonUnclassified,
			"openai", "gpt-5", KindFallback, "Provider anthropic is in cooldown (probe already attempted this run)"},
		// A format error advances only with failover.formatAdvances (set
		// below for this row), and gives the probe slot back.
		{"revision 2: a format probe gives the slot back", RulesV2, ReasonFormat, "anthropic", "sonnet", KindProbe, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Defaults.Fallbacks = []ModelRef{m("anthropic", "sonnet"), m("openai", "gpt-5")}
			cfg.FormatAdvances = true
			h := newHarness(t, cfg)
			// Both anthropic profiles cool down for every model, 60 s from
			// expiry (within the 2 min margin: the primary is probed).
			cool := ProfileState{CooldownUntil: t0 + 60000, CooldownReason: ReasonUnclassified, ErrorCount: 1,
				FailureCounts: map[string]int{ReasonUnclassified: 1}, LastFailureAt: t0 - 1}
			h.profiles["anthropic:a"], h.profiles["anthropic:b"] = cool, cool
			n := h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			wantCall(t, n, "anthropic", "claude", "anthropic:a", KindProbe)
			if a := h.payloads("AttemptStarted")[0].(events.AttemptStarted); a.ProbeSlot != (tc.rules >= RulesV2) {
				t.Fatalf("primary probe_slot %v under revision %d", a.ProbeSlot, tc.rules)
			}
			n = h.outcome(failed(tc.probeFail))
			if n.Kind != NextCall || n.Call.Provider != tc.wantProvider || n.Call.Model != tc.wantModel || n.Call.Kind != tc.wantKind {
				t.Fatalf("after the primary probe: %+v %+v", n, n.Call)
			}
			skips := h.payloads("CandidateSkipped")
			if tc.wantSkip == "" && len(skips) != 0 || tc.wantSkip != "" && (len(skips) != 1 || skips[0].(events.CandidateSkipped).Message != tc.wantSkip) {
				t.Fatalf("skips %+v, want %q", skips, tc.wantSkip)
			}
		})
	}
}
