package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// ---- model scope at turn level (POLICY "Model scope") ----

func TestModelScope_SiblingModelGoesThrough(t *testing.T) {
	h := newHarness(t, testConfig())
	cool := ProfileState{CooldownUntil: t0 + 30000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"}
	h.profiles["openai:user"], h.profiles["openai:key"] = cool, cool
	h.sess.Model, h.sess.Source = m("openai", "gpt-5-mini"), SourceUser
	wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5-mini", "openai:user", KindFirst)
	h.outcome(Outcome{OK: true})
	// The gpt-5 limit survives the gpt-5-mini answer (seeds).
	if s := h.profiles["openai:user"]; s.CooldownUntil != t0+30000 || s.CooldownModel != "gpt-5" || s.LastUsed != t0 {
		t.Fatalf("%+v", s)
	}
	// The same profiles, on gpt-5 itself: unusable (suspended, no probe:
	// 30 s from expiry is within the 2 min margin → probe).
	h.sess.Model = m("openai", "gpt-5")
	n := h.start(h.selectDefault(), "direct")
	if n.Call.Kind != KindProbe {
		t.Fatalf("%+v", n.Call)
	}
	// A billing disable blocks the sibling too.
	h = newHarness(t, testConfig())
	dis := ProfileState{DisabledUntil: t0 + 600000, DisabledReason: ReasonBilling}
	h.profiles["openai:user"], h.profiles["openai:key"] = dis, dis
	h.probeAt["openai"] = t0
	h.sess.Model, h.sess.Source = m("openai", "gpt-5-mini"), SourceUser
	if n := h.start(h.selectDefault(), "direct"); n.Kind != NextExhausted || n.Summary != "Provider openai is in cooldown" || !n.RawError {
		t.Fatalf("%+v", n)
	}
}

// ---- skip cache (reference §7 step 4, §11) ----

func TestSkipCache_TTLClampAndPrimaryNeverSkipped(t *testing.T) {
	cool := ProfileState{CooldownUntil: t0 + 600000, CooldownReason: ReasonTimeout}
	cases := []struct {
		name    string
		ttl     int64
		markAge int64
		skipped bool
	}{
		{"off by default", 0, 1, false},
		{"inside the TTL", 60000, 59999, true},
		{"at the TTL: expired", 60000, 60000, false},
		{"1 ms clamps to 1000: inside", 1, 999, true},
		{"1 ms clamps to 1000: expired", 1, 1000, false},
		{"an hour clamps to 10 min: inside", 3600000, 599999, true},
		{"an hour clamps to 10 min: expired", 3600000, 600000, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SkipCacheTTLMs = tc.ttl
			h := newHarness(t, cfg)
			h.profiles["anthropic:a"], h.profiles["anthropic:b"] = cool, cool
			e := h.env()
			e.SkipMarks = map[string]SkipMark{SkipKey("s1", "openai", "gpt-5", "openai:user"): {At: t0 - tc.markAge, Reason: ReasonAuthPermanent}}
			n := h.apply(StartTurn(h.selectDefault(), e, StartInput{TurnID: "t", Session: "s1", Chat: "direct"}))
			if tc.skipped {
				wantCall(t, n, "google", "gemini", "google:inline", KindFallback)
				cs := h.payloads("CandidateSkipped")[1].(events.CandidateSkipped)
				if cs.Message != "Skipping openai/gpt-5: recent auth_permanent failure in this session (run `openclaw models auth login --provider openai` to re-authenticate)" {
					t.Fatalf("%+v", cs)
				}
			} else {
				wantCall(t, n, "openai", "gpt-5", "openai:user", KindFallback)
			}
		})
	}
	// The primary is never skipped by the cache.
	cfg := testConfig()
	cfg.SkipCacheTTLMs = 60000
	h := newHarness(t, cfg)
	e := h.env()
	e.SkipMarks = map[string]SkipMark{SkipKey("s1", "anthropic", "claude", "anthropic:a"): {At: t0 - 1, Reason: ReasonAuth}}
	wantCall(t, h.apply(StartTurn(h.selectDefault(), e, StartInput{TurnID: "t", Session: "s1", Chat: "direct"})), "anthropic", "claude", "anthropic:a", KindFirst)
}
