package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// ---- retries (seed 000; reference §9) ----

// Exact delays for TurnStarted.seed 42: retry k is drawn from
// mixSeed(42, attempt k) in integer parts per million.
func TestRetry_ExactDelaysForFixedSeed(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 6
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantBase := []int64{1000, 2000, 4000, 8000, 16000, 30000}
	wantDelay := []int64{785, 1534, 2819, 8555, 21345, 27649}
	at := t0
	for k := range wantDelay {
		n := h.outcome(failed(ReasonTimeout))
		rs := h.payloads("RetryScheduled")[k].(events.RetryScheduled)
		if rs.Retry != k+1 || rs.Budget != 6 || rs.BaseMs != wantBase[k] || rs.DelayMs != wantDelay[k] ||
			rs.JitterSeed != mixSeed(42, k+1) || rs.WindowEndsAt != t0+90000 || rs.ResumeAt != at+wantDelay[k] ||
			n.WaitMs != wantDelay[k] || n.ResumeAt != at+wantDelay[k] {
			t.Fatalf("retry %d: %+v next %+v", k+1, rs, n)
		}
		h.resume()
		at = h.now
	}
	// The JitteredDelay helper gives the same numbers.
	for k := range wantDelay {
		if b, d := cfg.JitteredDelay(k+1, mixSeed(42, k+1)); b != wantBase[k] || d != wantDelay[k] {
			t.Fatalf("k=%d: %d %d", k+1, b, d)
		}
	}
	// Past the 30 s cap the base stays 30000 and the jittered delay never
	// exceeds it.
	if b, d := cfg.JitteredDelay(9, mixSeed(7, 9)); b != 30000 || d != 30000 {
		t.Fatalf("k=9: %d %d", b, d)
	}
}

// The SDK cap alone: retry.provider.maxRetryDelayMs is off here (with it,
// a rate limit waiting more than 10 s rotates: TestRetry_LongWaitRotates*).
func TestRetry_RetryAfterFloorAndSDKCap(t *testing.T) {
	noWaitLimit := func() Config {
		c := testConfig()
		c.MaxRetryDelayMs = 0
		return c
	}
	cases := []struct {
		name       string
		retryAfter int64
		wantWait   int64 // 0 = no retry, surfaces at once
	}{
		{"retry-after below the jittered delay: the delay", 100, 785},
		{"retry-after equal to the delay", 785, 785},
		{"retry-after above: the floor", 45000, 45000},
		{"retry-after exactly at the 60 s cap: waited", 60000, 60000},
		{"retry-after past the 60 s cap: surfaces at once", 60001, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, noWaitLimit())
			h.start(h.selectDefault(), "direct")
			o := failed(ReasonRateLimit)
			o.RetryAfterMs = tc.retryAfter
			n := h.outcome(o)
			if tc.wantWait == 0 {
				wantCall(t, n, "anthropic", "claude", "anthropic:b", KindRotation)
				return
			}
			if n.Kind != NextWait || n.WaitMs != tc.wantWait || n.ResumeAt != t0+tc.wantWait {
				t.Fatalf("%+v", n)
			}
		})
	}
	// The cap is config: failover.sdkRetryMaxWaitSeconds 0 turns it off.
	cfg := noWaitLimit()
	cfg.SDKRetryAfterCapMs = 0
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	o := failed(ReasonRateLimit)
	o.RetryAfterMs = 120000
	if n := h.outcome(o); n.Kind != NextWait || n.WaitMs != 120000 {
		t.Fatalf("%+v", n)
	}
}

// retry.provider.maxRetries: 3 (seeds) against OpenClaw 2026.9.6's 8
// (non-rate-limit); once a rate limit was seen the budget is capped at 9.
func TestRetry_BudgetSeedsVsOpenClaw(t *testing.T) {
	cases := []struct {
		name       string
		maxRetries int
		reason     string
		want       int
	}{
		{"seeds: 3", 3, ReasonRateLimit, 3},
		{"OpenClaw 2026.9.6: 8", 8, ReasonRateLimit, 8},
		{"rate limit caps a larger budget at 9", 12, ReasonRateLimit, 9},
		{"0 disables retries", 0, ReasonRateLimit, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries = tc.maxRetries
			h := newHarness(t, cfg)
			h.start(h.selectDefault(), "direct")
			for h.outcome(failed(tc.reason)).Kind == NextWait {
				h.resume()
			}
			wantCall(t, h.next, "anthropic", "claude", "anthropic:b", KindRotation)
			rs := h.payloads("RetryScheduled")
			if len(rs) != tc.want {
				t.Fatalf("%d retries, want %d", len(rs), tc.want)
			}
			for i, p := range rs {
				if p.(events.RetryScheduled).Budget != tc.want {
					t.Fatalf("retry %d: %+v", i+1, p)
				}
			}
		})
	}
}

// A retry only of replay-safe attempts; a request-size ceiling is never
// retried; format/auth/billing and the no-detail reasons are not retried.
func TestRetry_OnlyTransientReasons(t *testing.T) {
	for _, r := range allReasons {
		h := newHarness(t, testConfig())
		h.start(h.selectDefault(), "direct")
		n := h.outcome(failed(r))
		retried := n.Kind == NextWait
		want := r == ReasonRateLimit || r == ReasonOverloaded || r == ReasonServerError || r == ReasonTimeout
		if retried != want {
			t.Errorf("%s: retried %v, want %v", r, retried, want)
		}
	}
}
