package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// Seed 000 "Auth failure skip cache": "The cache is process-local and
// clears on Gateway restart." From rule revision 2 a turn reads no mark set
// before the engine that started it began (TurnStarted.SkipCacheSince);
// revision 1 read every mark on the ledger.
func TestSkipCache_ClearsOnRestart(t *testing.T) {
	cases := []struct {
		name    string
		rules   Rules
		since   int64 // StartInput.SkipCacheSince
		skipped bool
	}{
		{"no restart: the 10 s old mark skips", RulesV2, 0, true},
		{"engine began after the mark: not in its cache", RulesV2, t0 - 5000, false},
		{"engine began exactly at the mark: in its cache", RulesV2, t0 - 10000, true},
		{"engine began before the mark: in its cache", RulesV2, t0 - 20000, true},
		{"revision 1 read the ledger's marks whatever the restart", RulesV1, t0 - 5000, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SkipCacheTTLMs = 60000
			h := newHarness(t, cfg)
			far := ProfileState{CooldownUntil: t0 + 600000, CooldownReason: ReasonTimeout}
			h.profiles["anthropic:a"], h.profiles["anthropic:b"] = far, far
			mark := SkipMark{At: t0 - 10000, Reason: ReasonAuth}
			e := h.env()
			markAuthFailure(&e, mark)
			n := h.apply(StartTurn(h.selectDefault(), e, StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.rules, SkipCacheSince: tc.since}))
			if ts := h.payloads("TurnStarted")[0].(events.TurnStarted); ts.SkipCacheSince != tc.since {
				t.Fatalf("TurnStarted.skip_cache_since %d, want %d", ts.SkipCacheSince, tc.since)
			}
			if tc.skipped {
				wantCall(t, n, "google", "gemini", "google:inline", KindFallback)
				return
			}
			wantCall(t, n, "openai", "gpt-5", "openai:user", KindFallback)
		})
	}
}
