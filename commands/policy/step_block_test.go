package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// usageLimit is a Codex usage_limit_reached 429 with resets_in_seconds
// 86400, as the engine hands it to the decider at t0.
func usageLimit(now int64) Outcome {
	o := failed(ReasonRateLimit)
	o.Status, o.RetryAfterMs = 429, 86400000
	o.Reset = codexReset(now + day)
	o.LongWindow = &events.UsageWindow{Kind: "subscription", Field: "code", Match: "usage_limit_reached"}
	return o
}

// Reference §9: "rejected for rate limits with long-window evidence
// (periodic or subscription windows go straight to fallback)", and
// "rejected for rate_limit when fallbacks are configured and retry-after
// exceeds retry.provider.maxRetryDelayMs". Today a weekly limit was
// retried three times on the same key and a retry-after of 20 s spent a
// minute on one key before the next was tried.
func TestStep_LongWindowAndLongWaitRotateAtOnce(t *testing.T) {
	weekly := failed(ReasonRateLimit)
	weekly.LongWindow = &events.UsageWindow{Kind: "weekly", Field: "message", Match: "weekly limit reached"}
	wait20 := failed(ReasonRateLimit)
	wait20.RetryAfterMs = 20000
	wait10 := failed(ReasonRateLimit)
	wait10.RetryAfterMs = 10000
	soonReset := failed(ReasonRateLimit)
	soonReset.Reset = &events.ProviderReset{At: t0 + 15000, Source: "reset_header", Field: "headers.x-ratelimit-reset-tokens", Match: "15s"}
	cases := []struct {
		name     string
		out      Outcome
		maxDelay int64 // -1 = off
		strict   bool  // one candidate, one profile: nowhere else to go
		retry    int64 // the wait when retried; 0 = rotation at once
	}{
		{"weekly limit: no same-model retry", weekly, 0, false, 0},
		{"weekly limit with nowhere else to go: still not retried", weekly, 0, true, 0},
		{"retry-after 20 s > maxRetryDelayMs 10 s: rotate", wait20, 0, false, 0},
		{"retry-after exactly 10 s: retried", wait10, 0, false, 10000},
		{"reset in 15 s counts as the wait: rotate", soonReset, 0, false, 0},
		{"retry-after 20 s with nowhere else to go: slept", wait20, 0, true, 20000},
		{"retry-after 20 s, maxRetryDelayMs 0 (off): slept", wait20, -1, false, 20000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			if tc.maxDelay < 0 {
				cfg.MaxRetryDelayMs = 0
			}
			if tc.strict {
				cfg.Profiles = []Profile{{ID: "anthropic:a", Provider: "anthropic", Type: ProfileOAuth}}
				cfg.Defaults.Fallbacks = nil
			}
			h := newHarness(t, cfg)
			sel := h.selectDefault()
			if tc.strict {
				sel.Chain, sel.Strict = sel.Chain[:1], true
			}
			h.start(sel, "direct")
			n := h.outcome(tc.out)
			if tc.retry > 0 {
				if n.Kind != NextWait || n.WaitMs != tc.retry {
					t.Fatalf("want a retry after %d ms: %+v", tc.retry, n)
				}
				return
			}
			if len(h.payloads("RetryScheduled")) != 0 {
				t.Fatalf("retried: %+v", h.payloads("RetryScheduled"))
			}
			if tc.strict {
				if n.Kind != NextExhausted {
					t.Fatalf("%+v", n)
				}
				return
			}
			wantCall(t, n, "anthropic", "claude", "anthropic:b", KindRotation)
		})
	}
}

// Seed 000: "When the subscription hits a Codex usage limit, OpenClaw
// records the exact reset time when Codex provides one, tries the next
// ordered auth profile … Once the reset time passes, the subscription
// profile is eligible again and the next automatic selection can return
// to it."
func TestStep_CodexUsageLimitBlocksUntilResetThenReturns(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCall(t, h.start(h.selectDefault(), "direct"), "anthropic", "claude", "anthropic:a", KindFirst)
	wantCall(t, h.outcome(usageLimit(t0)), "anthropic", "claude", "anthropic:b", KindRotation)
	pf := h.payloads("ProfileFailureRecorded")[0].(events.ProfileFailureRecorded)
	if pf.BlockedUntil != t0+day || pf.BlockedReason != BlockedSubscriptionLimit || pf.BlockedSource != "codex_rate_limits" ||
		pf.BlockedModel != "claude" || pf.CooldownUntil != 0 || pf.Reset == nil || pf.Reset.At != t0+day {
		t.Fatalf("%+v", pf)
	}
	af := h.payloads("AttemptFailed")[0].(events.AttemptFailed)
	if af.Reset == nil || af.Reset.At != t0+day || af.LongWindow == nil || af.LongWindow.Kind != "subscription" {
		t.Fatalf("attempt evidence %+v", af)
	}
	h.outcome(Outcome{OK: true})
	// An hour later the blocked profile is not first; at the reset it is.
	for _, tc := range []struct {
		at   int64
		want string
	}{{t0 + 3600000, "anthropic:b"}, {t0 + day - 1, "anthropic:b"}, {t0 + day, "anthropic:a"}} {
		h.now = tc.at
		h.sess = SessionState{Session: "s1"} // no pin: the order decides
		if n := h.start(h.selectDefault(), "direct"); n.Call.ProfileID != tc.want {
			t.Fatalf("at +%d ms: %s, want %s", tc.at-t0, n.Call.ProfileID, tc.want)
		}
	}
}

// Reference §7 step 5 (OpenClaw 2026.9.6 shouldProbePrimaryDuringCooldown:
// "Generic 429 backoff can become stale before its local cooldown
// expires. Provider-recorded reset windows still remain authoritative
// until near expiry"): a primary whose profiles are all blocked by a
// provider reset is not probed for being rate limited, only within the
// near-expiry margin (2 min); a plain rate-limit cooldown is probed on the
// throttle. A fallback sibling whose profiles are all blocked does not use
// the transient probe slot (seed 000: siblings are tried "when the
// failure looks transient"; OpenClaw 2026.9.6 still probes it). A chain
// of one is probed on the throttle (nowhere else to go).
func TestStep_BlockedProfilesAreNotProbedBeforeTheirReset(t *testing.T) {
	block := func(model string) ProfileState {
		return ProfileState{Provider: "anthropic", ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1},
			LastFailureAt: t0, BlockedUntil: t0 + day, BlockedReason: BlockedSubscriptionLimit, BlockedSource: "codex_rate_limits", BlockedModel: model}
	}
	cool := ProfileState{Provider: "anthropic", ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1},
		LastFailureAt: t0, CooldownUntil: t0 + day, CooldownReason: ReasonRateLimit, CooldownModel: "claude"}
	cases := []struct {
		name    string
		states  ProfileState
		at      int64
		primary bool // the blocked provider is the primary (else the first fallback)
		strict  bool
		probe   bool
	}{
		{"blocked primary an hour in: skipped", block("claude"), t0 + 3600000, true, false, false},
		{"blocked primary 2 min before the reset: probed", block("claude"), t0 + day - 120000, true, false, true},
		{"plain rate-limit cooldown an hour in: probed (rate_limit)", cool, t0 + 3600000, true, false, true},
		{"blocked primary, chain of one: probed on the throttle", block("claude"), t0 + 3600000, true, true, true},
		{"blocked fallback sibling: no transient probe", block("gpt-5"), t0 + 3600000, false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			h := newHarness(t, cfg)
			h.now = tc.at
			ids := []string{"anthropic:a", "anthropic:b"}
			if !tc.primary {
				ids = []string{"openai:key", "openai:user"}
			}
			for _, id := range ids {
				s := tc.states
				s.ProfileID = id
				if !tc.primary {
					s.Provider = "openai"
				}
				h.profiles[id] = s
			}
			sel := h.selectDefault()
			if !tc.primary {
				// The blocked provider second: anthropic fails first.
				sel.Chain = []events.Candidate{sel.Chain[0], sel.Chain[1]}
			}
			if tc.strict {
				sel.Chain, sel.Strict = sel.Chain[:1], true
			}
			n := h.start(sel, "direct")
			if !tc.primary {
				wantCall(t, n, "anthropic", "claude", "anthropic:a", KindFirst)
				n = h.outcome(failed(ReasonServerError))
				for n.Kind == NextWait {
					h.resume()
					n = h.outcome(failed(ReasonServerError))
				}
			}
			probed := n.Kind == NextCall && n.Call.Kind == KindProbe
			if probed != tc.probe {
				t.Fatalf("probed %v, want %v: %+v %+v", probed, tc.probe, n, n.Call)
			}
			if !tc.probe {
				cs := h.payloads("CandidateSkipped")
				if len(cs) == 0 || cs[0].(events.CandidateSkipped).Reason != ReasonRateLimit ||
					cs[0].(events.CandidateSkipped).SoonestExpiry != t0+day {
					t.Fatalf("skip %+v", cs)
				}
			}
		})
	}
}
