package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Seed 000 "Auth failure skip cache": "The key includes the session,
// provider, model, and selected automatic or explicit profile ID.
// Switching profiles does not inherit another profile's failure marker."
// An auth failure of openai/gpt-5 on openai:user, in an earlier turn of
// the session: revision 1 marked it under every openai profile, so a later
// turn skipped openai/gpt-5 on openai:key, which never failed; revision 2
// marks the profile that failed only.
func TestSkipCache_KeyedByTheProfileThatFailed(t *testing.T) {
	cases := []struct {
		name  string
		rules Rules
		// failedCooling: openai:user still cools down from its auth
		// failure, so the order puts openai:key first.
		failedCooling bool
		skipped       bool
		wantProfile   string
	}{
		{"revision 1: another profile inherits the mark", RulesV1, true, true, ""},
		{"revision 2: another profile does not inherit the mark", RulesV2, true, false, "openai:key"},
		{"revision 2: the profile that failed is skipped", RulesV2, false, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SkipCacheTTLMs = 60000
			h := newHarness(t, cfg)
			far := ProfileState{CooldownUntil: t0 + 600000, CooldownReason: ReasonTimeout}
			h.profiles["anthropic:a"], h.profiles["anthropic:b"] = far, far
			if tc.failedCooling {
				h.profiles["openai:user"] = ProfileState{CooldownUntil: t0 + 20000, CooldownReason: ReasonAuth, ErrorCount: 1,
					FailureCounts: map[string]int{ReasonAuth: 1}, LastFailureAt: t0 - 10000}
			}
			mark := SkipMark{At: t0 - 10000, Reason: ReasonAuth}
			e := h.env()
			markAuthFailure(&e, mark)
			n := h.apply(StartTurn(h.selectDefault(), e, StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules}))
			if !tc.skipped {
				wantCall(t, n, "openai", "gpt-5", tc.wantProfile, KindFallback)
				return
			}
			wantCall(t, n, "google", "gemini", "google:inline", KindFallback)
			cs := h.payloads("CandidateSkipped")[1].(events.CandidateSkipped)
			if cs.Model != "gpt-5" || cs.Message != "Skipping openai/gpt-5: recent auth failure in this session (run `openclaw models auth login --provider openai` to re-authenticate)" {
				t.Fatalf("%+v", cs)
			}
		})
	}
}

// markAuthFailure puts mark in e as the engine folds an auth failure of
// openai:user on openai/gpt-5 in session s1 (engine/state.go markSkip):
// revision 1's every-profile form and revision 2's profile form.
func markAuthFailure(e *Env, mark SkipMark) {
	e.SkipMarks = map[string]SkipMark{}
	for _, id := range []string{"", "openai:key", "openai:user"} {
		e.SkipMarks[SkipKey("s1", "openai", "gpt-5", id)] = mark
	}
	e.ProfileSkipMarks = map[string]SkipMark{SkipKey("s1", "openai", "gpt-5", "openai:user"): mark}
}
