package policy

import (
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
)

const day = int64(86400000)

func codexReset(at int64) *events.ProviderReset {
	return &events.ProviderReset{At: at, Source: "codex_rate_limits", Field: "message", Match: "resets_in_seconds=86400"}
}

// Issue 17 / seed 000 "OpenAI Codex subscription plus API-key backup":
// "OpenClaw records the exact reset time when Codex provides one". A
// rate_limit carrying a provider reset blocks the profile until exactly
// that reset (reference §3 markAuthProfileBlockedUntil: blockedUntil =
// max(existing, new), blockedReason subscription_limit, blockedSource,
// blockedModel when model-scoped; the cooldown fields cleared;
// failureCounts.rate_limit incremented), bounded by
// auth.cooldowns.subscriptionBlockMaxMs, instead of the 30 s ladder step.
func TestBlock_RateLimitWithResetBlocksUntilExactlyTheReset(t *testing.T) {
	c := testConfig()
	pr := prof(c, "openai:user")
	type want struct {
		blockedUntil       int64
		blockedModel       string
		blockedSource      string
		cooldownUntil      int64
		cooldownReason     string
		errorCount         int
		windowKept, capped bool
		recorded           bool
	}
	cases := []struct {
		name   string
		maxMs  int64 // 0 = default
		before ProfileState
		f      Failure
		want   want
	}{
		{"Codex resets_in_seconds 86400: blocked until now + 86400000 ms, scoped to gpt-5",
			0, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + day, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 1, recorded: true}},
		{"a reset 30 days out is bounded by the default 7 days",
			0, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + 30*day)},
			want{blockedUntil: t0 + 604800000, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 1, capped: true, recorded: true}},
		{"subscriptionBlockMaxMs 3600000 bounds a day to an hour",
			3600000, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + 3600000, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 1, capped: true, recorded: true}},
		{"a reset exactly at the bound is not bounded",
			day, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + day, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 1, recorded: true}},
		{"subscriptionBlockMaxMs 0 (formats 1–2): the 30 s ladder step",
			-1, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{cooldownUntil: t0 + 30000, cooldownReason: ReasonRateLimit, errorCount: 1, recorded: true}},
		{"a short reset header (1.5 s) replaces the 30 s step",
			0, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5",
				Reset: &events.ProviderReset{At: t0 + 1500, Source: "reset_header", Field: "headers.x-ratelimit-reset-requests", Match: "1.5s"}},
			want{blockedUntil: t0 + 1500, blockedModel: "gpt-5", blockedSource: "reset_header", errorCount: 1, recorded: true}},
		{"a reset already past: the ladder",
			0, ProfileState{}, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0)},
			want{cooldownUntil: t0 + 30000, cooldownReason: ReasonRateLimit, errorCount: 1, recorded: true}},
		{"no model known: the block covers every model",
			0, ProfileState{}, Failure{Reason: ReasonRateLimit, Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + day, blockedSource: "codex_rate_limits", errorCount: 1, recorded: true}},
		{"an active block, a later reset of the same model: moved to the later (max of both)",
			0, ProfileState{ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1}, LastFailureAt: t0 - 1000,
				BlockedUntil: t0 + 3600000, BlockedReason: BlockedSubscriptionLimit, BlockedSource: "reset_text", BlockedModel: "gpt-5"},
			Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + day, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 2, recorded: true}},
		{"an active block, an earlier reset: the block keeps its deadline and source",
			0, ProfileState{ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1}, LastFailureAt: t0 - 1000,
				BlockedUntil: t0 + 2*day, BlockedReason: BlockedSubscriptionLimit, BlockedSource: "reset_text", BlockedModel: "gpt-5"},
			Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + 2*day, blockedModel: "gpt-5", blockedSource: "reset_text", errorCount: 2, windowKept: true, recorded: true}},
		{"an active block of gpt-5, a reset seen on gpt-5-mini: widened to every model",
			0, ProfileState{ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1}, LastFailureAt: t0 - 1000,
				BlockedUntil: t0 + 3600000, BlockedReason: BlockedSubscriptionLimit, BlockedSource: "codex_rate_limits", BlockedModel: "gpt-5"},
			Failure{Reason: ReasonRateLimit, Model: "gpt-5-mini", Reset: codexReset(t0 + day)},
			want{blockedUntil: t0 + day, blockedSource: "codex_rate_limits", errorCount: 2, recorded: true}},
		{"a rate limit without reset inside an active block of its model: counted, no cooldown on top",
			0, ProfileState{ErrorCount: 1, FailureCounts: map[string]int{ReasonRateLimit: 1}, LastFailureAt: t0 - 1000,
				BlockedUntil: t0 + 60000, BlockedReason: BlockedSubscriptionLimit, BlockedSource: "codex_rate_limits", BlockedModel: "gpt-5"},
			Failure{Reason: ReasonRateLimit, Model: "gpt-5"},
			want{blockedUntil: t0 + 60000, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", errorCount: 2, windowKept: true, recorded: true}},
		{"an active timeout cooldown is never shortened by the block (seed 004)",
			0, ProfileState{ErrorCount: 1, FailureCounts: map[string]int{ReasonTimeout: 1}, LastFailureAt: t0 - 1000,
				CooldownUntil: t0 + 29000, CooldownReason: ReasonTimeout},
			Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + 1000)},
			want{blockedUntil: t0 + 1000, blockedModel: "gpt-5", blockedSource: "codex_rate_limits", cooldownUntil: t0 + 29000,
				cooldownReason: ReasonTimeout, errorCount: 2, windowKept: true, recorded: true}},
		{"billing with a reset is a disable, never a block",
			0, ProfileState{}, Failure{Reason: ReasonBilling, Model: "gpt-5", Reset: codexReset(t0 + day)},
			want{errorCount: 1, recorded: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := c.Params
			switch {
			case tc.maxMs > 0:
				p.SubscriptionBlockMaxMs = tc.maxMs
			case tc.maxMs < 0:
				p.SubscriptionBlockMaxMs = 0
			}
			before := tc.before
			before.ProfileID, before.Provider = pr.ID, pr.Provider
			ev, ok := p.RecordFailure(before, pr, tc.f, t0)
			if ok != tc.want.recorded {
				t.Fatalf("recorded %v", ok)
			}
			got := want{blockedUntil: ev.BlockedUntil, blockedModel: ev.BlockedModel, blockedSource: ev.BlockedSource,
				cooldownUntil: ev.CooldownUntil, cooldownReason: ev.CooldownReason, errorCount: ev.ErrorCount,
				windowKept: ev.WindowKept, capped: ev.BlockBounded, recorded: ok}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			if tc.want.blockedUntil != 0 {
				if ev.BlockedReason != BlockedSubscriptionLimit || ev.FailureCounts[ReasonRateLimit] != before.FailureCounts[ReasonRateLimit]+1 || ev.LastFailureAt != t0 {
					t.Fatalf("%+v", ev)
				}
			} else if ev.BlockedReason != "" || ev.Reset != nil {
				t.Fatalf("no block expected: %+v", ev)
			}
			if tc.f.Reset != nil && tc.want.blockedUntil != 0 && (ev.Reset == nil || *ev.Reset != *tc.f.Reset) {
				t.Fatalf("evidence %+v, want %+v", ev.Reset, tc.f.Reset)
			}
			// The fold carries the block.
			st := EvolveProfile(before, ev)
			if st.BlockedUntil != ev.BlockedUntil || st.BlockedModel != ev.BlockedModel || st.BlockedSource != ev.BlockedSource {
				t.Fatalf("fold %+v", st)
			}
		})
	}
}

// Reference §3 isProfileInCooldown: true while now < max(blockedUntil,
// cooldownUntil, disabledUntil); a block scoped to a model leaves a
// sibling usable; model "" ignores scoped blocks; the reset moment itself
// is usable again.
func TestBlock_UsableUntilTheResetForItsModelOnly(t *testing.T) {
	p := DefaultParams()
	s := ProfileState{ProfileID: "openai:user", Provider: "openai", BlockedUntil: t0 + day,
		BlockedReason: BlockedSubscriptionLimit, BlockedSource: "codex_rate_limits", BlockedModel: "gpt-5"}
	unscoped := s
	unscoped.BlockedModel = ""
	cases := []struct {
		name  string
		s     ProfileState
		model string
		now   int64
		want  bool
	}{
		{"blocked model during the block", s, "gpt-5", t0 + day - 1, false},
		{"blocked model at the reset", s, "gpt-5", t0 + day, true},
		{"sibling model", s, "gpt-5-mini", t0 + 1, true},
		{"model unknown ignores a scoped block", s, "", t0 + 1, true},
		{"unscoped block blocks every model", unscoped, "gpt-5-mini", t0 + 1, false},
		{"unscoped block, model unknown", unscoped, "", t0 + 1, false},
		{"never-cooling provider", ProfileState{Provider: "openrouter", BlockedUntil: t0 + day}, "x", t0, true},
	}
	for _, tc := range cases {
		if got := p.Usable(tc.s, tc.model, tc.now); got != tc.want {
			t.Errorf("%s: usable %v, want %v", tc.name, got, tc.want)
		}
	}
	if u := s.UnusableUntil(); u != t0+day {
		t.Fatalf("UnusableUntil %d", u)
	}
}

// POLICY "A success clears the failure fields … except a cooldown scoped
// to another model": a block scoped to another model stays too, with the
// counters it depends on; a success on the blocked model (a probe near the
// reset) clears it; clearOtherModelCooldownOnSuccess (OpenClaw 2026.9.6)
// clears it as well.
func TestBlock_SuccessOnSiblingKeepsTheBlock(t *testing.T) {
	c := testConfig()
	pr := prof(c, "openai:user")
	s := ProfileState{ProfileID: pr.ID, Provider: pr.Provider}
	ev, _ := c.RecordFailure(s, pr, Failure{Reason: ReasonRateLimit, Model: "gpt-5", Reset: codexReset(t0 + day)}, t0)
	s = EvolveProfile(s, ev)

	// Nothing to clear: a ProfileUsed, the block untouched.
	used, ok := c.RecordSuccess(s, pr, "gpt-5-mini", "t", 2, t0+1000).(events.ProfileUsed)
	want := s
	want.LastUsed, want.LastProbeAt = t0+1000, t0+1000
	if after := EvolveProfile(s, used); !ok || !reflect.DeepEqual(after, want) {
		t.Fatalf("sibling success:\n got %+v\nwant %+v", after, want)
	}
	// With something to clear (an expired timeout cooldown), the block is
	// kept by name in the ProfileSucceeded.
	s2 := s
	s2.CooldownUntil, s2.CooldownReason = t0-1, ReasonTimeout
	s2.FailureCounts = map[string]int{ReasonRateLimit: 1, ReasonTimeout: 1}
	kept := c.RecordSuccess(s2, pr, "gpt-5-mini", "t", 2, t0+1000).(events.ProfileSucceeded)
	after := EvolveProfile(s2, kept)
	want.FailureCounts = map[string]int{ReasonRateLimit: 1}
	if !reflect.DeepEqual(after, want) || kept.KeptBlockedUntil != t0+day || kept.KeptBlockedModel != "gpt-5" ||
		kept.KeptBlockedSource != "codex_rate_limits" || kept.KeptErrorCount != 1 {
		t.Fatalf("sibling success:\n got %+v\nwant %+v\n%+v", after, want, kept)
	}
	cleared := EvolveProfile(s, c.RecordSuccess(s, pr, "gpt-5", "t", 2, t0+1000))
	if cleared.HasFailureState() || cleared.BlockedUntil != 0 {
		t.Fatalf("success on the blocked model: %+v", cleared)
	}
	oc := c
	oc.ClearOtherModelCooldownOnSuccess = true
	if st := EvolveProfile(s, oc.RecordSuccess(s, pr, "gpt-5-mini", "t", 2, t0+1000)); st.HasFailureState() {
		t.Fatalf("OpenClaw switch: %+v", st)
	}
	if st := EvolveProfile(s, ClearProfile(pr, "cli", "")); st.HasFailureState() {
		t.Fatalf("operator clear: %+v", st)
	}
}

// Reference §7: an active block adds 1000 to rate_limit in the
// unavailable reason; the soonest expiry counts a block for its model (not
// as the latest of matching rate-limit cooldowns).
func TestBlock_SoonestExpiryAndUnavailableReason(t *testing.T) {
	p := DefaultParams()
	blocked := ProfileState{ProfileID: "a", Provider: "openai", BlockedUntil: t0 + day, BlockedReason: BlockedSubscriptionLimit, BlockedModel: "gpt-5"}
	cooling := ProfileState{ProfileID: "b", Provider: "openai", CooldownUntil: t0 + 30000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"}
	if got := p.SoonestExpiry([]ProfileState{blocked}, "gpt-5", t0); got != t0+day {
		t.Fatalf("blocked alone: %d", got)
	}
	if got := p.SoonestExpiry([]ProfileState{blocked, cooling}, "gpt-5", t0); got != t0+30000 {
		t.Fatalf("blocked and cooling: %d", got)
	}
	if got := p.SoonestExpiry([]ProfileState{blocked}, "gpt-5-mini", t0); got != 0 {
		t.Fatalf("sibling: %d", got)
	}
	if r := p.UnavailableReason([]ProfileState{blocked, {ProfileID: "c", FailureCounts: map[string]int{ReasonAuth: 5}}}, "gpt-5", t0); r != ReasonRateLimit {
		t.Fatalf("reason %s", r)
	}
	// Order: the blocked profile goes last, by its reset.
	c := testConfig()
	st := map[string]ProfileState{"openai:user": {ProfileID: "openai:user", Provider: "openai", BlockedUntil: t0 + day, BlockedModel: "gpt-5"}}
	if got := c.ResolveOrder(OrderInput{Provider: "openai", Model: "gpt-5", States: st, Now: t0}); !reflect.DeepEqual(got, []string{"openai:key", "openai:user"}) {
		t.Fatalf("order %v", got)
	}
	if got := c.ResolveOrder(OrderInput{Provider: "openai", Model: "gpt-5-mini", States: st, Now: t0}); got[0] != "openai:user" {
		t.Fatalf("sibling order %v", got)
	}
}
