package policy

import (
	"reflect"
	"testing"
)

// ---- cooldown switches: both settings ----

// Counters survive an expired window (seeds) vs reset on expiry (OpenClaw
// 2026.9.6), on a non-rate-limit reason.
func TestCooldown_CountersSurviveExpiredWindow_BothSettings(t *testing.T) {
	pr := prof(testConfig(), "anthropic:b")
	for _, tc := range []struct {
		reset bool
		want  []int64
	}{{false, []int64{30000, 60000, 300000, 300000}}, {true, []int64{30000, 30000, 30000, 30000}}} {
		p := DefaultParams()
		p.ResetOnExpiry = tc.reset
		var s ProfileState
		now := t0
		for i, w := range tc.want {
			next, e, _ := fail(p, s, pr, ReasonAuth, "", now)
			if e.CooldownUntil-now != w || e.CountersReset != (tc.reset && i > 0) {
				t.Fatalf("resetOnExpiry=%v failure %d: %+v", tc.reset, i+1, e)
			}
			s, now = next, next.CooldownUntil
		}
	}
	// Exponential rate limits double to the 24 h cap: 30 s × 2^12 > 24 h.
	p := DefaultParams()
	p.RateLimitMode = RateLimitExponential
	var s ProfileState
	now := t0
	var got []int64
	for i := 0; i < 14; i++ {
		next, e, _ := fail(p, s, pr, ReasonRateLimit, "claude", now)
		got = append(got, e.CooldownUntil-now)
		s, now = next, next.CooldownUntil
	}
	want := []int64{30000, 60000, 120000, 240000, 480000, 960000, 1920000, 3840000, 7680000, 15360000, 30720000, 61440000, 86400000, 86400000}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("exponential: %v", got)
	}
}

// Billing during an active auth cooldown disables for 10 min; the auth
// cooldown keeps its own deadline. An inline key's billing window never
// doubles; a failure inside it keeps it.
func TestDisable_InlineKeyWindowFixedAndKept(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "google:inline")
	var s ProfileState
	now := t0
	for i := 0; i < 4; i++ {
		next, e, _ := fail(p, s, pr, ReasonBilling, "gemini", now)
		if e.DisabledUntil-now != 600000 || e.FailureCounts[ReasonBilling] != i+1 {
			t.Fatalf("inline billing %d: %+v", i+1, e)
		}
		_, kept, _ := fail(p, next, pr, ReasonBilling, "gemini", now+599999)
		if kept.DisabledUntil != now+600000 || !kept.WindowKept {
			t.Fatalf("inline window moved: %+v", kept)
		}
		s, now = next, next.DisabledUntil
	}
	// Inline keys record auth (ladder) and auth_permanent (doubling, 1 h cap).
	_, e, ok := fail(p, ProfileState{}, pr, ReasonAuth, "gemini", t0)
	if !ok || e.CooldownUntil != t0+30000 {
		t.Fatalf("%+v", e)
	}
	_, e, ok = fail(p, ProfileState{}, pr, ReasonAuthPermanent, "gemini", t0)
	if !ok || e.DisabledUntil != t0+600000 {
		t.Fatalf("%+v", e)
	}
	for _, r := range []string{ReasonTimeout, ReasonModelNotFound, ReasonUnknown, ReasonSessionExpired} {
		if _, _, ok := fail(p, ProfileState{}, pr, r, "gemini", t0); ok {
			t.Errorf("inline key recorded %s", r)
		}
	}
}

// kilocode never cools down either; its failures are not recorded.
func TestCooldown_KilocodeNeverCools(t *testing.T) {
	p := DefaultParams()
	pr := Profile{ID: "kilocode:k", Provider: "kilocode", Type: ProfileAPIKey}
	for _, r := range allReasons {
		if _, ok := p.RecordFailure(ProfileState{}, pr, Failure{Reason: r}, t0); ok {
			t.Errorf("kilocode recorded %s", r)
		}
	}
	if !p.Usable(ProfileState{Provider: "kilocode", DisabledUntil: t0 + 1}, "m", t0) {
		t.Error("kilocode unusable")
	}
}
