package policy

import (
	"reflect"
	"testing"
)

// The example: three rate limits, each arriving 1 ms after the
// previous window expired, under the three settings.
func TestCooldown_ThreeRateLimitsJustAfterExpiry_AllSettings(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Params)
		want []int64
	}{
		{"ladder (seeds, default)", func(*Params) {}, []int64{30000, 60000, 300000}},
		{"rateLimit: exponential", func(p *Params) { p.RateLimitMode = RateLimitExponential }, []int64{30000, 60000, 120000}},
		{"resetOnExpiry", func(p *Params) { p.ResetOnExpiry = true }, []int64{30000, 30000, 30000}},
	}
	c := testConfig()
	pr := prof(c, "openai:key")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			tc.edit(&p)
			var s ProfileState
			now := t0
			for i, want := range tc.want {
				next, ev, ok := fail(p, s, pr, ReasonRateLimit, "gpt-5", now)
				if !ok {
					t.Fatal("not recorded")
				}
				if got := ev.CooldownUntil - now; got != want {
					t.Fatalf("failure %d: cooldown %d ms, want %d", i+1, got, want)
				}
				s, now = next, next.CooldownUntil+1
			}
		})
	}
}

func TestCooldown_LadderByErrorCount(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "anthropic:b")
	var s ProfileState
	now := t0
	for i, want := range []int64{30000, 60000, 300000, 300000, 300000} {
		next, e, _ := fail(p, s, pr, ReasonTimeout, "claude", now)
		if e.CooldownUntil-now != want || e.ErrorCount != i+1 {
			t.Fatalf("failure %d: %d ms errorCount %d, want %d ms", i+1, e.CooldownUntil-now, e.ErrorCount, want)
		}
		s, now = next, next.CooldownUntil+1
	}
}

func TestCooldown_SecondFailureInActiveWindowKeepsDeadline(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "anthropic:b")
	s, e1, _ := fail(p, ProfileState{}, pr, ReasonAuth, "claude", t0)
	if e1.CooldownUntil != t0+30000 || e1.WindowKept {
		t.Fatalf("first: %+v", e1)
	}
	s, e2, _ := fail(p, s, pr, ReasonAuth, "claude", t0+29999)
	if e2.CooldownUntil != t0+30000 || !e2.WindowKept || e2.ErrorCount != 2 || e2.FailureCounts[ReasonAuth] != 2 {
		t.Fatalf("second failure moved the window or did not count: %+v", e2)
	}
	// At the deadline the window has expired: a new one from errorCount 3.
	_, e3, _ := fail(p, s, pr, ReasonAuth, "claude", t0+30000)
	if e3.CooldownUntil != t0+30000+300000 || e3.WindowKept {
		t.Fatalf("third: %+v", e3)
	}
}

func TestDisable_BillingDoublesToCap(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "openai:key")
	var s ProfileState
	now := t0
	// Each failure 1 ms after the previous window: the 9th reaches the 24 h
	// cap; the 10th comes more than the 24 h failure window after the 9th,
	// so the counters reset and it starts again at 10 min.
	want := []int64{600000, 1200000, 2400000, 4800000, 9600000, 19200000, 38400000, 76800000, 86400000, 600000}
	for i, w := range want {
		next, e, _ := fail(p, s, pr, ReasonBilling, "gpt-5", now)
		if e.DisabledUntil-now != w || e.DisabledReason != ReasonBilling {
			t.Fatalf("billing %d: %d ms, want %d", i+1, e.DisabledUntil-now, w)
		}
		s, now = next, next.DisabledUntil+1
	}
}

func TestDisable_AuthPermanentDoublesToOneHour(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "openai:key")
	var s ProfileState
	now := t0
	for i, w := range []int64{600000, 1200000, 2400000, 3600000, 3600000} {
		s2, e, _ := fail(p, s, pr, ReasonAuthPermanent, "", now)
		if e.DisabledUntil-now != w {
			t.Fatalf("auth_permanent %d: %d ms, want %d", i+1, e.DisabledUntil-now, w)
		}
		s = s2
		now = s.DisabledUntil + 1
	}
}

func TestDisable_ActiveWindowKeptNeitherExtendedNorShortened(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "openai:key")
	s, _, _ := fail(p, ProfileState{}, pr, ReasonBilling, "", t0)
	s, e, _ := fail(p, s, pr, ReasonBilling, "", t0+599999)
	if e.DisabledUntil != t0+600000 || !e.WindowKept || e.FailureCounts[ReasonBilling] != 2 {
		t.Fatalf("%+v", e)
	}
	// The next billing failure after expiry counts 3: 40 min.
	_, e, _ = fail(p, s, pr, ReasonBilling, "", t0+600000)
	if e.DisabledUntil != t0+600000+2400000 {
		t.Fatalf("after expiry: %d", e.DisabledUntil-(t0+600000))
	}
}

func TestDisable_InlineKeyFreshTenMinuteWindow(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "google:inline")
	s, e, _ := fail(p, ProfileState{}, pr, ReasonBilling, "gemini", t0)
	if e.DisabledUntil != t0+600000 {
		t.Fatal(e.DisabledUntil - t0)
	}
	_, e, _ = fail(p, s, pr, ReasonBilling, "gemini", t0+600001)
	if e.DisabledUntil != t0+600001+600000 {
		t.Fatalf("second inline window %d ms, want 600000", e.DisabledUntil-(t0+600001))
	}
	// Inline keys record only auth, auth_permanent and billing.
	if _, _, ok := fail(p, s, pr, ReasonRateLimit, "gemini", t0+700000); ok {
		t.Fatal("inline key recorded a rate limit")
	}
}

func TestCooldown_CountersResetOnlyAfterFailureWindow(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "anthropic:b")
	s, _, _ := fail(p, ProfileState{}, pr, ReasonTimeout, "claude", t0)
	s, _, _ = fail(p, s, pr, ReasonRateLimit, "claude", t0+40000)
	// Exactly 24 h after lastFailureAt: not more than the window, no reset.
	_, e, _ := fail(p, s, pr, ReasonTimeout, "claude", t0+40000+86400000)
	if e.CountersReset || e.ErrorCount != 3 {
		t.Fatalf("at exactly 24 h: %+v", e)
	}
	_, e, _ = fail(p, s, pr, ReasonTimeout, "claude", t0+40000+86400001)
	if !e.CountersReset || e.ErrorCount != 1 || e.CooldownUntil-(t0+40000+86400001) != 30000 {
		t.Fatalf("after 24 h: %+v", e)
	}
	// The reset keeps only failureCounts.rate_limit (reference §3 step 3).
	if !reflect.DeepEqual(e.FailureCounts, map[string]int{ReasonRateLimit: 1, ReasonTimeout: 1}) {
		t.Fatalf("counts %v", e.FailureCounts)
	}
}

func TestCooldown_NeutralReasonsAndNeverCoolingProviders(t *testing.T) {
	p := DefaultParams()
	c := testConfig()
	for _, r := range []string{ReasonOverloaded, ReasonServerError, ReasonTLSCertificate, ReasonEmptyResponse,
		ReasonContextOverflow, ReasonFormat, ReasonNoErrorDetails} {
		if _, _, ok := fail(p, ProfileState{}, prof(c, "openai:key"), r, "gpt-5", t0); ok {
			t.Errorf("%s touched profile health", r)
		}
	}
	if _, _, ok := fail(p, ProfileState{}, prof(c, "openrouter:default"), ReasonRateLimit, "x", t0); ok {
		t.Error("openrouter cooled down")
	}
	if !p.Usable(ProfileState{Provider: "openrouter", CooldownUntil: t0 + 1}, "x", t0) {
		t.Error("openrouter unusable")
	}
}

func TestCooldown_ModelScope(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "openai:key")
	for _, r := range []string{ReasonRateLimit, ReasonTimeout, ReasonModelNotFound} {
		s, e, _ := fail(p, ProfileState{}, pr, r, "gpt-5", t0)
		if e.CooldownModel != "gpt-5" {
			t.Errorf("%s: cooldownModel %q", r, e.CooldownModel)
		}
		if p.Usable(s, "gpt-5", t0+1) || !p.Usable(s, "gpt-5-mini", t0+1) {
			t.Errorf("%s: scope not applied", r)
		}
	}
	s, e, _ := fail(p, ProfileState{}, pr, ReasonAuth, "gpt-5", t0)
	if e.CooldownModel != "" || p.Usable(s, "gpt-5-mini", t0+1) {
		t.Error("auth cooldown must block every model")
	}
	s, _, _ = fail(p, ProfileState{}, pr, ReasonBilling, "gpt-5", t0)
	if p.Usable(s, "gpt-5-mini", t0+1) {
		t.Error("billing must block every model")
	}
	// An active gpt-5 rate limit, then a gpt-5-mini rate limit: window kept,
	// scope cleared (reference §3 step 6).
	s, _, _ = fail(p, ProfileState{}, pr, ReasonRateLimit, "gpt-5", t0)
	_, e, _ = fail(p, s, pr, ReasonRateLimit, "gpt-5-mini", t0+1000)
	if e.CooldownModel != "" || e.CooldownUntil != t0+30000 {
		t.Errorf("%+v", e)
	}
}

func TestSuccess_KeepsCooldownScopedToAnotherModel(t *testing.T) {
	c := testConfig()
	pr := prof(c, "openai:key")
	s, _, _ := fail(c.Params, ProfileState{}, pr, ReasonRateLimit, "gpt-5", t0)
	e := c.RecordSuccess(s, pr, "gpt-5-mini", "t", 1, t0+1000)
	s2 := EvolveProfile(s, e)
	if s2.CooldownUntil != t0+30000 || s2.CooldownModel != "gpt-5" || s2.LastUsed != t0+1000 || s2.ErrorCount != 1 {
		t.Fatalf("seeds: the gpt-5 cooldown must stay: %+v", s2)
	}
	if c.Usable(s2, "gpt-5", t0+1000) {
		t.Fatal("gpt-5 reopened")
	}
	c.ClearOtherModelCooldownOnSuccess = true
	s3 := EvolveProfile(s, c.RecordSuccess(s, pr, "gpt-5-mini", "t", 1, t0+1000))
	if s3.CooldownUntil != 0 || s3.ErrorCount != 0 || s3.FailureCounts != nil || !c.Usable(s3, "gpt-5", t0+1000) {
		t.Fatalf("OpenClaw 2026.9.6 clears everything: %+v", s3)
	}
	// Success on the cooled model itself clears everything.
	s4 := EvolveProfile(s, testConfig().RecordSuccess(s, pr, "gpt-5", "t", 1, t0+1000))
	if s4.CooldownUntil != 0 || s4.ErrorCount != 0 || s4.LastProbeAt != t0+1000 {
		t.Fatalf("%+v", s4)
	}
}

func TestClear_ResetsFailureFieldsKeepsLastUsed(t *testing.T) {
	p := DefaultParams()
	pr := prof(testConfig(), "openai:key")
	s := ProfileState{ProfileID: pr.ID, Provider: pr.Provider, LastUsed: t0 - 5}
	s, _, _ = fail(p, s, pr, ReasonBilling, "", t0)
	s = EvolveProfile(s, ClearProfile(pr, "ops", "recharged"))
	if s.DisabledUntil != 0 || s.ErrorCount != 0 || s.LastUsed != t0-5 || !p.Usable(s, "gpt-5", t0+1) {
		t.Fatalf("%+v", s)
	}
}

func TestSoonestExpiry_ModelAware(t *testing.T) {
	p := DefaultParams()
	states := []ProfileState{
		{Provider: "openai", CooldownUntil: t0 + 50000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5-mini"},
		{Provider: "openai", CooldownUntil: t0 + 90000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"},
		{Provider: "openai", CooldownUntil: t0 + 70000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"},
	}
	// The unrelated gpt-5-mini limit is ignored; the latest matching counts.
	if got := p.SoonestExpiry(states, "gpt-5", t0); got != t0+90000 {
		t.Fatalf("got %d", got-t0)
	}
	// For gpt-5-mini the gpt-5 limits are ignored.
	if got := p.SoonestExpiry(states, "gpt-5-mini", t0); got != t0+50000 {
		t.Fatalf("gpt-5-mini: got %d", got-t0)
	}
	// A billing disable blocks every model: min(earliest other, latest matching).
	states = append(states, ProfileState{Provider: "openai", DisabledUntil: t0 + 80000, DisabledReason: ReasonBilling})
	if got := p.SoonestExpiry(states, "gpt-5", t0); got != t0+80000 {
		t.Fatalf("with billing: got %d", got-t0)
	}
	// An unscoped timeout cooldown counts by its earliest expiry.
	states = append(states, ProfileState{Provider: "openai", CooldownUntil: t0 + 60000, CooldownReason: ReasonAuth})
	if got := p.SoonestExpiry(states, "gpt-5", t0); got != t0+60000 {
		t.Fatalf("with auth: got %d", got-t0)
	}
	// A disable plus another model's scoped cooldown: the disable counts.
	other := []ProfileState{{Provider: "openai", DisabledUntil: t0 + 40000, DisabledReason: ReasonBilling,
		CooldownUntil: t0 + 99000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5-mini"}}
	if got := p.SoonestExpiry(other, "gpt-5", t0); got != t0+40000 {
		t.Fatalf("disable + other scope: got %d", got-t0)
	}
	// Windows that already ended count as cleared (the expiry sweep).
	expired := []ProfileState{
		{Provider: "openai", CooldownUntil: t0 - 1, CooldownReason: ReasonAuth},
		{Provider: "openai", DisabledUntil: t0, DisabledReason: ReasonBilling},
		{Provider: "openai", CooldownUntil: t0 + 600000, CooldownReason: ReasonTimeout},
	}
	if got := p.SoonestExpiry(expired, "gpt-5", t0); got != t0+600000 {
		t.Fatalf("expired windows counted: got %d", got-t0)
	}
	if got := p.SoonestExpiry(expired[:2], "gpt-5", t0); got != 0 {
		t.Fatalf("only expired windows: got %d", got)
	}
	// Never-cooling providers are ignored.
	if got := p.SoonestExpiry([]ProfileState{{Provider: "openrouter", CooldownUntil: t0 + 5}}, "x", t0); got != 0 {
		t.Fatal(got)
	}
	if got := p.SoonestExpiry(nil, "gpt-5", t0); got != 0 {
		t.Fatal(got)
	}
}

func TestUnavailableReason_Scoring(t *testing.T) {
	p := DefaultParams()
	now := t0
	cases := []struct {
		name   string
		states []ProfileState
		want   string
	}{
		{"nothing recorded", []ProfileState{{}}, ReasonUnknown},
		{"active billing beats counts", []ProfileState{{DisabledUntil: now + 1, DisabledReason: ReasonBilling}, {FailureCounts: map[string]int{ReasonRateLimit: 5}}}, ReasonBilling},
		{"tie goes to priority", []ProfileState{{CooldownUntil: now + 1, CooldownReason: ReasonRateLimit}, {CooldownUntil: now + 1, CooldownReason: ReasonAuth}}, ReasonAuth},
		{"counts when no window", []ProfileState{{FailureCounts: map[string]int{ReasonTimeout: 2, ReasonRateLimit: 1}}}, ReasonTimeout},
	}
	for _, c := range cases {
		if got := p.UnavailableReason(c.states, "m", now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestJitter_DeterministicInRange(t *testing.T) {
	for seed := uint64(0); seed < 2000; seed++ {
		f := jitterPPM(seed, 500000, 1500000)
		if f < 500000 || f >= 1500000 || f != jitterPPM(seed, 500000, 1500000) {
			t.Fatalf("seed %d: %d", seed, f)
		}
	}
	// Extremes of the 64-bit draw map to the bounds.
	if jitterPPM(0, 500000, 1500000) < 500000 || jitterPPM(5, 7, 7) != 7 {
		t.Fatal("bounds")
	}
	if ppm(0.5) != 500000 || ppm(1.5) != 1500000 {
		t.Fatal("ppm")
	}
	for _, c := range []struct{ base, f, limit, want int64 }{
		{1000, 500000, 30000, 500}, {1000, 1499999, 30000, 1500}, {3, 500000, 30000, 2}, {16000, 1500000, 30000, 24000},
		{30000, 1200000, 30000, 30000}, {1 << 62, 1500000, 30000, 30000},
	} {
		if got := scalePPM(c.base, c.f, c.limit); got != c.want {
			t.Errorf("scalePPM(%d, %d, %d) = %d, want %d", c.base, c.f, c.limit, got, c.want)
		}
	}
}
