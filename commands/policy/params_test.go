package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultParams_EveryPolicyNumber(t *testing.T) {
	p := DefaultParams()
	ints := []struct {
		name      string
		got, want int64
	}{
		{"RateLimitBaseMs", p.RateLimitBaseMs, 30000},
		{"RateLimitMaxMs", p.RateLimitMaxMs, 86400000},
		{"BillingBaseMs", p.BillingBaseMs, 600000},
		{"BillingMaxMs", p.BillingMaxMs, 86400000},
		{"AuthPermanentBaseMs", p.AuthPermanentBaseMs, 600000},
		{"AuthPermanentMaxMs", p.AuthPermanentMaxMs, 3600000},
		{"FailureWindowMs", p.FailureWindowMs, 86400000},
		{"InlineKeyBillingWindowMs", p.InlineKeyBillingWindowMs, 600000},
		{"MaxRetries", int64(p.MaxRetries), 3},
		{"RetryBackoffBaseMs", p.RetryBackoffBaseMs, 1000},
		{"RetryBackoffMaxMs", p.RetryBackoffMaxMs, 30000},
		{"RetryWindowMs", p.RetryWindowMs, 90000},
		{"RateLimitRetryCap", int64(p.RateLimitRetryCap), 9},
		{"RateLimitRotations", int64(p.RateLimitRotations), 1},
		{"OverloadedRotations", int64(p.OverloadedRotations), 1},
		{"ChainOverloadRounds", int64(p.ChainOverloadRounds), 10},
		{"ChainOverloadBaseMs", p.ChainOverloadBaseMs, 2500},
		{"ChainOverloadMaxMs", p.ChainOverloadMaxMs, 30000},
		{"ChainOverloadNoticeAfterMs", p.ChainOverloadNoticeAfterMs, 30000},
		{"ProbeThrottleMs", p.ProbeThrottleMs, 30000},
		{"NearExpiryMarginMs", p.NearExpiryMarginMs, 120000},
		{"TransientProbesPerProvider", int64(p.TransientProbesPerProvider), 1},
		{"SkipCacheTTLMs", p.SkipCacheTTLMs, 0},
		{"SDKRetryAfterCapMs", p.SDKRetryAfterCapMs, 60000},
		{"LoopLimitBase", int64(p.LoopLimitBase), 24},
		{"LoopLimitPerProfile", int64(p.LoopLimitPerProfile), 8},
		{"LoopLimitMin", int64(p.LoopLimitMin), 32},
		{"LoopLimitMax", int64(p.LoopLimitMax), 160},
		{"AutoOverrideProbeIntervalMs", p.AutoOverrideProbeIntervalMs, 300000},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if !reflect.DeepEqual(p.CooldownLadderMs, []int64{30000, 60000, 300000}) {
		t.Errorf("ladder = %v", p.CooldownLadderMs)
	}
	if p.RateLimitMode != "ladder" || p.ResetOnExpiry || p.ClearOtherModelCooldownOnSuccess || p.AutoPinSurvivesCompaction {
		t.Errorf("switches not at the seeds' defaults: %+v", p)
	}
	if p.JitterMin != 0.5 || p.JitterMax != 1.5 {
		t.Errorf("jitter = [%g, %g)", p.JitterMin, p.JitterMax)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParamsValidate_NamesTheField(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Params)
		field string
	}{
		{"empty ladder", func(p *Params) { p.CooldownLadderMs = nil }, "CooldownLadderMs"},
		{"decreasing ladder", func(p *Params) { p.CooldownLadderMs = []int64{60000, 30000} }, "CooldownLadderMs[1]"},
		{"mode", func(p *Params) { p.RateLimitMode = "linear" }, "RateLimitMode"},
		{"billing max below base", func(p *Params) { p.BillingMaxMs = 1 }, "BillingMaxMs"},
		{"window", func(p *Params) { p.FailureWindowMs = 0 }, "FailureWindowMs"},
		{"retries", func(p *Params) { p.MaxRetries = -1 }, "MaxRetries"},
		{"jitter", func(p *Params) { p.JitterMin = 2 }, "JitterMin"},
		{"loop", func(p *Params) { p.LoopLimitMax = 1 }, "LoopLimit"},
		{"skip ttl", func(p *Params) { p.SkipCacheTTLMs = -5 }, "SkipCacheTTLMs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.edit(&p)
			err := p.Validate()
			if !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want one naming %s", err, c.field)
			}
		})
	}
}

func TestSkipCacheTTL_OffByDefaultAndClamped(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{{0, 0}, {-1, 0}, {1, 1000}, {999, 1000}, {1000, 1000}, {60000, 60000}, {600000, 600000}, {600001, 600000}} {
		p := DefaultParams()
		p.SkipCacheTTLMs = c.in
		if got := p.EffectiveSkipCacheTTL(); got != c.want {
			t.Errorf("TTL %d → %d, want %d", c.in, got, c.want)
		}
	}
}

func TestLoopLimit_Formula(t *testing.T) {
	p := DefaultParams()
	for _, c := range []struct{ profiles, want int }{{0, 32}, {1, 32}, {2, 40}, {3, 48}, {10, 104}, {17, 160}, {100, 160}} {
		if got := p.LoopLimit(c.profiles); got != c.want {
			t.Errorf("LoopLimit(%d) = %d, want %d", c.profiles, got, c.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	c := testConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Order = map[string][]string{"openai": {"anthropic:a"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "auth.order.openai[0]") {
		t.Fatalf("err = %v", err)
	}
	c = testConfig()
	c.Profiles[0].Type = "password"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), ".type") {
		t.Fatalf("err = %v", err)
	}
}

// The package never reads the wall clock nor unseeded randomness.
func TestPackage_NoWallClockNoGlobalRand(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"time.Now(", "math/rand", "time.Since("} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", f, bad)
			}
		}
	}
}
