package policy

import (
	"reflect"
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

// ---- rotation (seed 000 "one same-provider auth-profile rotation") ----

func TestRotation_OneForOverloadedThenFallback(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "anthropic", "claude", "anthropic:b", KindRotation)
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "openai", "gpt-5", "openai:user", KindFallback)
	if len(h.payloads("ProfileFailureRecorded")) != 0 {
		t.Fatal("overloaded touched profile health")
	}
	// Auth rotates through every profile (no cap).
	h = newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantCall(t, h.outcome(failed(ReasonAuth)), "anthropic", "claude", "anthropic:b", KindRotation)
	wantCall(t, h.outcome(failed(ReasonAuth)), "openai", "gpt-5", "openai:user", KindFallback)
	// config: auth.cooldowns.rateLimitedProfileRotations 0 → straight to fallback.
	cfg.RateLimitRotations = 0
	h = newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantCall(t, h.outcome(failed(ReasonRateLimit)), "openai", "gpt-5", "openai:user", KindFallback)
}

// ---- inner loop limit (reference §9) ----

func TestLoopLimit_StopsRetriesPerCandidate(t *testing.T) {
	cases := []struct {
		name     string
		provider string
		profiles int
		limit    int
	}{
		{"no profiles → 32", "mistral", 0, 32},
		{"1 profile → 32", "google", 1, 32},
		{"2 profiles → 40", "anthropic", 2, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries, cfg.RateLimitRetryCap = 1000, 1000
			h := newHarness(t, cfg)
			h.sess.Model, h.sess.Source = m(tc.provider, "x"), SourceUser
			h.start(h.selectDefault(), "direct")
			if h.st.AttemptLimit != tc.limit {
				t.Fatalf("TurnStarted.attempt_limit %d", h.st.AttemptLimit)
			}
			for h.outcome(failed(ReasonRateLimit)).Kind == NextWait {
				h.resume()
			}
			if got := len(h.payloads("RetryScheduled")); got != tc.limit-1 || h.st.Attempts != tc.limit {
				t.Fatalf("%d retries, %d attempts; want %d, %d", got, h.st.Attempts, tc.limit-1, tc.limit)
			}
			if h.next.Kind != NextExhausted {
				t.Fatalf("%+v", h.next)
			}
		})
	}
	p := DefaultParams()
	if p.LoopLimit(1) != 32 || p.LoopLimit(2) != 40 || p.LoopLimit(17) != 160 || p.LoopLimit(1000) != 160 {
		t.Fatal("loop limit values")
	}
}

// ---- stop conditions (POLICY dispositions; reference §7 step 7, §12) ----

func TestStop_EachCondition(t *testing.T) {
	cases := []struct {
		name     string
		strict   bool
		out      Outcome
		wantKind NextKind
		wantDisp string
		wantCall string // for advancing cases
	}{
		{"context overflow → compaction", false, Outcome{Reason: ReasonContextOverflow, Status: 413}, NextStop, DispositionCompaction, ""},
		{"request-size ceiling advances", false, Outcome{Reason: ReasonContextOverflow, Status: 413, RequestSizeCeiling: true}, NextCall, "", "openai/gpt-5"},
		{"ceiling advances whatever the status", false, Outcome{Reason: ReasonContextOverflow, Status: 429, RequestSizeCeiling: true}, NextCall, "", "openai/gpt-5"},
		{"abort", false, Outcome{Reason: ReasonTimeout, Disposition: DispositionAbort}, NextStop, DispositionAbort, ""},
		{"refusal", false, Outcome{Reason: ReasonUnclassified, Disposition: DispositionRefusal}, NextStop, DispositionRefusal, ""},
		{"coordination", false, Outcome{Reason: ReasonUnknown, Disposition: DispositionCoordination}, NextStop, DispositionCoordination, ""},
		{"final unknown: no candidate left", true, Outcome{Reason: ReasonUnknown}, NextStop, DispositionFailover, ""},
		{"unknown with a next candidate advances", false, Outcome{Reason: ReasonUnknown}, NextCall, "", "openai/gpt-5"},
		{"final unclassified exhausts (a known failover reason)", true, Outcome{Reason: ReasonUnclassified}, NextExhausted, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxRetries = 0
			h := newHarness(t, cfg)
			if tc.strict {
				h.sess.Model, h.sess.Source = m("mistral", "large"), SourceUser
			}
			h.start(h.selectDefault(), "direct")
			tc.out.Error = events.ProviderErrorRecord{MessagePreview: "boom"}
			n := h.outcome(tc.out)
			if n.Kind != tc.wantKind {
				t.Fatalf("%+v", n)
			}
			switch n.Kind {
			case NextStop:
				ts := h.payloads("TurnStopped")
				if n.Disposition != tc.wantDisp || n.Reason != tc.out.Reason || n.Message != "boom" || len(ts) != 1 ||
					ts[0].(events.TurnStopped).Disposition != tc.wantDisp {
					t.Fatalf("%+v", n)
				}
				if tc.wantDisp != DispositionFailover && len(h.payloads("ProfileFailureRecorded")) != 0 {
					t.Fatal("a stop touched profile health")
				}
				if len(h.payloads("RetryScheduled")) != 0 || len(h.payloads("FallbackStepped")) != 0 {
					t.Fatal("a stop retried or stepped")
				}
			case NextCall:
				if got := n.Call.Provider + "/" + n.Call.Model; got != tc.wantCall || n.Call.Kind != KindFallback {
					t.Fatalf("%+v", n.Call)
				}
			}
		})
	}
}

// An unknown error whose only later candidates are TLS-banned has no next
// candidate (reference §7 steps 2, 7.7).
func TestStop_UnknownWhenOnlyTLSBannedCandidatesRemain(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	cfg.Defaults = Models{Primary: m("openai", "gpt-5"), Fallbacks: []ModelRef{m("anthropic", "claude"), m("openai", "gpt-5-mini")}}
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantCall(t, h.outcome(failed(ReasonTLSCertificate)), "anthropic", "claude", "anthropic:a", KindFallback)
	if n := h.outcome(failed(ReasonUnknown)); n.Kind != NextStop || n.Reason != ReasonUnknown {
		t.Fatalf("%+v", n)
	}
}

// ---- exhaustion (reference §7 "Failure summary") ----

// A single attempt: Next carries the provider's own redacted error (OpenClaw
// rethrows it as is); TurnExhausted keeps the structured summary.
func TestExhaustion_SingleAttemptSurfacesRawError(t *testing.T) {
	h := newHarness(t, testConfig())
	h.sess.Model, h.sess.Source = m("mistral", "large"), SourceUser
	h.start(h.selectDefault(), "direct")
	n := h.outcome(Outcome{Reason: ReasonAuth, Status: 401, Code: "invalid_api_key",
		Error: events.ProviderErrorRecord{Status: 401, MessagePreview: "Incorrect API key provided: sk-***"}})
	if n.Kind != NextExhausted || !n.RawError || n.Summary != "Incorrect API key provided: sk-***" ||
		len(n.Attempts) != 1 || n.Attempts[0].Status != 401 || n.Attempts[0].Reason != ReasonAuth || n.Attempts[0].Code != "invalid_api_key" {
		t.Fatalf("%+v", n)
	}
	te := h.payloads("TurnExhausted")
	if len(te) != 1 || te[0].(events.TurnExhausted).Summary != "All models failed (1): mistral/large: Incorrect API key provided: sk-*** (auth)" {
		t.Fatalf("%+v", te)
	}
	// The body preview stands in when the provider gave no message; the
	// reason's words when it gave neither.
	h = newHarness(t, testConfig())
	h.sess.Model, h.sess.Source = m("mistral", "large"), SourceUser
	h.start(h.selectDefault(), "direct")
	n = h.outcome(Outcome{Reason: ReasonModelNotFound, Status: 404, Error: events.ProviderErrorRecord{BodyPreview: `{"error":"no such model"}`}})
	if !n.RawError || n.Summary != `{"error":"no such model"}` {
		t.Fatalf("%+v", n)
	}
	h = newHarness(t, testConfig())
	h.sess.Model, h.sess.Source = m("mistral", "large"), SourceUser
	h.start(h.selectDefault(), "direct")
	if n = h.outcome(Outcome{Reason: ReasonEmptyResponse}); !n.RawError || n.Summary != "empty response" {
		t.Fatalf("%+v", n)
	}
}

func TestExhaustion_SummaryTextAndModelAwareSoonestExpiry(t *testing.T) {
	c := DefaultConfig()
	c.MaxRetries = 0
	c.Profiles = []Profile{
		{ID: "a:1", Provider: "a", Type: ProfileAPIKey},
		{ID: "o:1", Provider: "o", Type: ProfileOAuth},
		{ID: "o:2", Provider: "o", Type: ProfileAPIKey},
		{ID: "o:3", Provider: "o", Type: ProfileToken},
	}
	c.Defaults = Models{Primary: m("a", "m"), Fallbacks: []ModelRef{m("o", "big")}}
	h := newHarness(t, c)
	// Unrelated: a rate limit on o:2 scoped to another model, sooner than
	// anything else; an expired disable on o:3.
	h.profiles["o:2"] = ProfileState{ProfileID: "o:2", Provider: "o", CooldownUntil: t0 + 1000, CooldownReason: ReasonRateLimit, CooldownModel: "small", ErrorCount: 1}
	h.profiles["o:3"] = ProfileState{ProfileID: "o:3", Provider: "o", DisabledUntil: t0 - 5000, DisabledReason: ReasonBilling, ErrorCount: 1}
	wantCall(t, h.start(h.selectDefault(), "direct"), "a", "m", "a:1", KindFirst)
	h.outcome(Outcome{Reason: ReasonBilling, Status: 402, Error: events.ProviderErrorRecord{MessagePreview: "insufficient credits"}})
	if callStr(h.next.Call) != "o/big@o:1" {
		t.Fatalf("%+v", h.next.Call)
	}
	n := h.outcome(Outcome{Reason: ReasonModelNotFound, Status: 404, Error: events.ProviderErrorRecord{MessagePreview: "model big not found"}})
	want := "All models failed (2): a/m: insufficient credits (billing) | o/big: model big not found (model_not_found)"
	if n.Kind != NextExhausted || n.Summary != want || n.RawError {
		t.Fatalf("%q %+v", n.Summary, n)
	}
	// a:1 disabled until t0+600000; o:1 cooled for big until t0+30000; the
	// o:2 limit on "small" and the expired o:3 disable do not count.
	if n.SoonestCooldownExpiry != t0+30000 {
		t.Fatalf("soonest %d", n.SoonestCooldownExpiry-t0)
	}
	te := h.payloads("TurnExhausted")[0].(events.TurnExhausted)
	if te.Summary != want || te.Reason != ReasonModelNotFound || te.SoonestCooldownExpiry != t0+30000 ||
		!reflect.DeepEqual(te.Attempts, n.Attempts) || te.Attempts[0].Status != 402 || te.Attempts[1].Status != 404 {
		t.Fatalf("%+v", te)
	}
	// Skipped candidates are attempts of the summary with their skip text.
	h = newHarness(t, c)
	h.profiles["o:1"] = ProfileState{CooldownUntil: t0 + 600000, CooldownReason: ReasonAuth}
	h.profiles["o:2"] = ProfileState{CooldownUntil: t0 + 600000, CooldownReason: ReasonAuth}
	h.profiles["o:3"] = ProfileState{CooldownUntil: t0 + 500000, CooldownReason: ReasonAuth}
	h.start(h.selectDefault(), "direct")
	n = h.outcome(Outcome{Reason: ReasonTimeout, Error: events.ProviderErrorRecord{MessagePreview: "timed out"}})
	want = "All models failed (2): a/m: timed out (timeout) | o/big: Provider o has auth issue (skipping all models) (auth)"
	if n.Summary != want || n.SoonestCooldownExpiry != t0+30000 {
		t.Fatalf("%q %d", n.Summary, n.SoonestCooldownExpiry-t0)
	}
}

// callStr renders a call as provider/model@profile for compact assertions.
func callStr(c *Call) string {
	if c == nil {
		return ""
	}
	return c.Provider + "/" + c.Model + "@" + c.ProfileID
}

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

// ---- order (reference §5; seed 000 "Rotation order") ----

func TestOrder_ReferenceCases(t *testing.T) {
	cool := func(until int64) ProfileState { return ProfileState{CooldownUntil: until, CooldownReason: ReasonAuth} }
	cases := []struct {
		name   string
		cfgOrd map[string][]string
		in     OrderInput
		want   []string
	}{
		{"explicit order kept; cooling profiles to the end by soonest expiry, not list position",
			map[string][]string{"p": {"p:api1", "p:token", "p:api2", "p:oauth-ok"}},
			OrderInput{States: map[string]ProfileState{"p:api1": cool(t0 + 9000), "p:token": cool(t0 + 3000)}},
			[]string{"p:api2", "p:oauth-ok", "p:token", "p:api1"}},
		{"explicit order ignores type and lastUsed",
			map[string][]string{"p": {"p:api2", "p:api1", "p:oauth-ok"}},
			OrderInput{States: map[string]ProfileState{"p:api2": {LastUsed: 99}, "p:api1": {LastUsed: 1}}},
			[]string{"p:api2", "p:api1", "p:oauth-ok"}},
		{"explicit order: pinned profile first", map[string][]string{"p": {"p:api2", "p:api1", "p:oauth-ok"}},
			OrderInput{Preferred: "p:oauth-ok"}, []string{"p:oauth-ok", "p:api2", "p:api1"}},
		{"implicit: oauth < token < api_key, expired OAuth after usable OAuth", nil, OrderInput{},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"implicit: lastUsed ascending inside a tier", nil,
			OrderInput{States: map[string]ProfileState{"p:api1": {LastUsed: t0 - 1}, "p:api2": {LastUsed: t0 - 2}}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api2", "p:api1"}},
		{"implicit: disabled and cooling last by soonest expiry", nil,
			OrderInput{States: map[string]ProfileState{"p:oauth-ok": {DisabledUntil: t0 + 2, DisabledReason: ReasonBilling}, "p:api1": cool(t0 + 1)}},
			[]string{"p:oauth-expired", "p:token", "p:api2", "p:api1", "p:oauth-ok"}},
		{"implicit: pinned profile first", nil, OrderInput{Preferred: "p:api1"},
			[]string{"p:api1", "p:oauth-ok", "p:oauth-expired", "p:token", "p:api2"}},
		{"an OAuth profile expiring exactly now counts as expired", nil,
			OrderInput{Now: t0 + 3600000}, []string{"p:oauth-expired", "p:oauth-ok", "p:token", "p:api1", "p:api2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := orderConfig()
			c.Order = tc.cfgOrd
			in := tc.in
			in.Provider = "p"
			if in.Now == 0 {
				in.Now = t0
			}
			if got := c.ResolveOrder(in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// A user-locked profile is prepended while eligible (reference §7 step 3),
// replaced by the next eligible one while it cools, and never overwritten
// by the auto pin.
func TestOrder_UserLockedProfilePrepended(t *testing.T) {
	cfg := testConfig()
	cfg.Order = map[string][]string{"openai": {"openai:user", "openai:key"}}
	h := newHarness(t, cfg)
	h.sess.Pin, h.sess.PinProvider, h.sess.PinSource = "openai:key", "openai", PinUser
	h.sess.Model, h.sess.Source = m("openai", "gpt-5"), SourceUser
	wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5", "openai:key", KindFirst)
	h.profiles["openai:key"] = ProfileState{CooldownUntil: t0 + 1000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"}
	wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFirst)
	h.outcome(Outcome{OK: true})
	if h.sess.Pin != "openai:key" || h.sess.PinSource != PinUser {
		t.Fatalf("%+v", h.sess)
	}
	// An auto pin rotates to the profile that answered.
	h2 := newHarness(t, cfg)
	h2.sess.Pin, h2.sess.PinProvider, h2.sess.PinSource = "openai:key", "openai", PinAuto
	h2.sess.Model, h2.sess.Source = m("openai", "gpt-5"), SourceUser
	h2.profiles["openai:key"] = ProfileState{DisabledUntil: t0 + 1000, DisabledReason: ReasonBilling}
	wantCall(t, h2.start(h2.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFirst)
	h2.outcome(Outcome{OK: true})
	if h2.sess.Pin != "openai:user" || h2.sess.PinSource != PinAuto {
		t.Fatalf("%+v", h2.sess)
	}
}

// ---- chain (reference §6) ----

func TestChain_ReferenceCases(t *testing.T) {
	p := m("p", "0")
	cases := []struct {
		name      string
		requested ModelRef
		fallbacks []ModelRef
		override  bool
		want      []string
	}{
		{"configured chain with the primary as a fallback: no second primary", m("a", "1"), []ModelRef{p, m("b", "2")}, false,
			[]string{"a/1@requested", "p/0@configured-fallback", "b/2@configured-fallback"}},
		{"same model on two providers is not a duplicate", m("a", "x"), []ModelRef{m("b", "x")}, false,
			[]string{"a/x@requested", "b/x@configured-fallback", "p/0@configured-primary"}},
		{"override nil list behaves as []: strict", m("a", "1"), nil, true, []string{"a/1@requested"}},
		{"zero entries dropped", m("a", "1"), []ModelRef{{}, {Provider: "b"}, m("c", "3")}, false,
			[]string{"a/1@requested", "c/3@configured-fallback", "p/0@configured-primary"}},
		{"override that repeats the requested model", m("a", "1"), []ModelRef{m("a", "1")}, true, []string{"a/1@requested"}},
		{"no fallbacks, no override: requested then primary", m("a", "1"), nil, false, []string{"a/1@requested", "p/0@configured-primary"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(BuildChain(tc.requested, tc.fallbacks, tc.override, p)); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// ---- selection sources (seed 000 "Selection source policy") ----

func TestSelect_EverySource(t *testing.T) {
	cfg := testConfig()
	cfg.Agents = map[string]AgentModel{
		"strict":   {Primary: m("openai", "gpt-5")},
		"empty":    {Primary: m("openai", "gpt-5"), HasFallbacks: true, Fallbacks: []ModelRef{}},
		"own":      {Primary: m("openai", "gpt-5"), HasFallbacks: true, Fallbacks: []ModelRef{m("google", "gemini"), m("anthropic", "claude")}},
		"fallback": {HasFallbacks: true, Fallbacks: []ModelRef{m("google", "gemini")}},
	}
	user, auto, origin := m("openai", "gpt-5-mini"), m("openai", "gpt-5"), m("anthropic", "claude")
	defaultChain := []string{"anthropic/claude", "openai/gpt-5", "google/gemini"}
	cases := []struct {
		name   string
		sess   SessionState
		req    SelectRequest
		source SelectionSource
		strict bool
		probe  bool
		want   []string
	}{
		{"default", SessionState{}, SelectRequest{}, SourceDefault, false, false, defaultChain},
		{"agent primary without fallbacks: strict", SessionState{}, SelectRequest{Agent: "strict"}, SourceAgent, true, false, []string{"openai/gpt-5"}},
		{"agent primary with fallbacks: []: strict", SessionState{}, SelectRequest{Agent: "empty"}, SourceAgent, true, false, []string{"openai/gpt-5"}},
		{"agent primary with own fallbacks", SessionState{}, SelectRequest{Agent: "own"}, SourceAgent, false, false,
			[]string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"agent with fallbacks but no primary: the default primary, its fallbacks", SessionState{}, SelectRequest{Agent: "fallback"}, SourceDefault, false, false,
			[]string{"anthropic/claude", "google/gemini"}},
		{"unknown agent: default", SessionState{}, SelectRequest{Agent: "nobody"}, SourceDefault, false, false, defaultChain},
		{"stored default source on a strict agent stays strict", SessionState{Model: user, Source: SourceDefault}, SelectRequest{Agent: "strict"}, SourceAgent, true, false,
			[]string{"openai/gpt-5"}},
		{"cron payload: configured fallbacks, primary appended", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini")}}, SourceCron, false, false,
			[]string{"google/gemini", "openai/gpt-5", "anthropic/claude"}},
		{"cron payload.fallbacks: exactly those", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true, Fallbacks: []ModelRef{user}}},
			SourceCron, false, false, []string{"google/gemini", "openai/gpt-5-mini"}},
		{"cron payload.fallbacks: []: strict", SessionState{}, SelectRequest{Cron: &CronPayload{Model: m("google", "gemini"), HasFallbacks: true}},
			SourceCron, true, false, []string{"google/gemini"}},
		{"cron payload is not a user override: wins over a stored user selection", SessionState{Model: user, Source: SourceUser},
			SelectRequest{Cron: &CronPayload{Model: m("google", "gemini")}}, SourceCron, false, false, []string{"google/gemini", "openai/gpt-5", "anthropic/claude"}},
		{"cron payload with no model: the session's selection", SessionState{Model: user, Source: SourceUser}, SelectRequest{Cron: &CronPayload{}},
			SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"auto before 5 min: the auto model with the configured chain", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 299999}, SourceAuto, false, false, []string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"auto at 5 min: probe the origin first", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0, LastAutoProbeAt: t0 - 300000}, SourceAuto, false, true, defaultChain},
		{"auto never probed: probe now", SessionState{Model: auto, Source: SourceAuto, Origin: origin},
			SelectRequest{Now: t0}, SourceAuto, false, true, defaultChain},
		{"auto without a known origin: no probe", SessionState{Model: auto, Source: SourceAuto},
			SelectRequest{Now: t0}, SourceAuto, false, false, []string{"openai/gpt-5", "google/gemini", "anthropic/claude"}},
		{"user: strict", SessionState{Model: user, Source: SourceUser}, SelectRequest{}, SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"user beats an agent primary", SessionState{Model: user, Source: SourceUser}, SelectRequest{Agent: "own"}, SourceUser, true, false, []string{"openai/gpt-5-mini"}},
		{"legacy without source: strict", SessionState{Model: user}, SelectRequest{}, SourceLegacy, true, false, []string{"openai/gpt-5-mini"}},
		{"legacy source: strict", SessionState{Model: user, Source: SourceLegacy}, SelectRequest{}, SourceLegacy, true, false, []string{"openai/gpt-5-mini"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := cfg.Select(tc.sess, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range sel.Chain {
				got = append(got, c.Provider+"/"+c.Model)
			}
			if sel.Source != tc.source || sel.Strict != tc.strict || sel.AutoOriginProbe != tc.probe || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %s strict=%v probe=%v %v\nwant %s strict=%v probe=%v %v",
					sel.Source, sel.Strict, sel.AutoOriginProbe, got, tc.source, tc.strict, tc.probe, tc.want)
			}
		})
	}
}

// A stored auto override: cleared when its probed origin answers, kept
// when the origin fails and a fallback answers, cleared by /new and
// /reset; a user override survives them.
func TestSelect_AutoOverrideLifecycle(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	origin := m("anthropic", "claude")
	stored := func() SessionState {
		ps, err := SelectModel(SessionState{}, "s1", m("openai", "gpt-5"), SourceAuto, &origin)
		if err != nil {
			t.Fatal(err)
		}
		return fold(SessionState{Session: "s1"}, ps)
	}
	// Origin fails: the override stays.
	h := newHarness(t, cfg)
	h.sess = stored()
	sel, _ := cfg.Select(h.sess, SelectRequest{Now: t0})
	h.start(sel, "direct")
	h.outcome(failed(ReasonAuth))
	h.outcome(failed(ReasonAuth))
	if n := h.outcome(Outcome{OK: true}); n.AnsweredBy != m("openai", "gpt-5") || h.sess.Model != m("openai", "gpt-5") || h.sess.Source != SourceAuto {
		t.Fatalf("%+v %+v", n, h.sess)
	}
	// Origin answers: cleared (auto_recovered); the next turn is default.
	h = newHarness(t, cfg)
	h.sess = stored()
	sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0})
	h.start(sel, "direct")
	h.outcome(Outcome{OK: true})
	cl := h.payloads("SessionModelCleared")
	if len(cl) != 1 || cl[0].(events.SessionModelCleared).Cause != "auto_recovered" || h.sess.Model != (ModelRef{}) {
		t.Fatalf("%+v %+v", cl, h.sess)
	}
	if sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0}); sel.Source != SourceDefault {
		t.Fatalf("%+v", sel)
	}
	// An answer from the origin in a non-probe turn does not clear it.
	h = newHarness(t, cfg)
	h.sess = stored()
	sel, _ = cfg.Select(h.sess, SelectRequest{Now: t0, LastAutoProbeAt: t0})
	h.start(sel, "direct")
	h.outcome(Outcome{OK: true})
	if len(h.payloads("SessionModelCleared")) != 0 {
		t.Fatal("cleared without a probe")
	}
	for _, kind := range []string{"new", "reset"} {
		s := stored()
		if got := fold(s, ResetSession(s, "s1", kind)); got.Model != (ModelRef{}) || got.Source != "" {
			t.Fatalf("/%s kept the auto override: %+v", kind, got)
		}
		u := fold(SessionState{Session: "s1"}, []events.Payload{events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: string(SourceUser)}})
		if got := fold(u, ResetSession(u, "s1", kind)); got.Model != m("openai", "gpt-5") {
			t.Fatalf("/%s cleared a user override", kind)
		}
	}
}

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

// ---- notices (seed 000; reference §10) ----

func TestNotices_ExactTexts(t *testing.T) {
	if got := FallbackNoticeText("openai/gpt-5", "anthropic/claude", "rate limit (+1 more attempts)"); got != "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; rate limit (+1 more attempts))" {
		t.Fatal(got)
	}
	if got := FallbackClearedNoticeText("anthropic/claude", "openai/gpt-5"); got != "↪️ Model Fallback cleared: anthropic/claude (was openai/gpt-5)" {
		t.Fatal(got)
	}
	if got := FallbackClearedNoticeText("a/b", "a/b"); got != "↪️ Model Fallback cleared: a/b" {
		t.Fatal(got)
	}
	if OverloadNoticeText != "The AI service is temporarily overloaded. I'm still retrying; this may take a few minutes." {
		t.Fatal(OverloadNoticeText)
	}
	for _, c := range []struct{ at []events.ExhaustedAttempt }{{nil}} {
		if ReasonSummary(c.at) != "" {
			t.Fatal("empty")
		}
	}
	if got := ReasonSummary([]events.ExhaustedAttempt{{Code: "E42"}, {Reason: ReasonAuth}}); got != "E42 (+1 more attempts)" {
		t.Fatal(got)
	}
	if got := ReasonSummary([]events.ExhaustedAttempt{{Reason: ReasonAuthPermanent}}); got != "auth permanent" {
		t.Fatal(got)
	}
	for chat, want := range map[string]bool{"direct": true, "group": false, "channel": false} {
		if delivered(chat) != want {
			t.Errorf("%s: %v", chat, !want)
		}
	}
}

// A changed (selected, active) pair notifies again; a channel chat records
// the state change and the notice without delivering it.
func TestNotices_NewPairNotifiesAgainAndChannelSuppressed(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	run := func(chat string, failures ...string) Next {
		h.profiles = map[string]ProfileState{}
		h.start(h.selectDefault(), chat)
		for _, r := range failures {
			h.outcome(failed(r))
		}
		return h.outcome(Outcome{OK: true})
	}
	n := run("direct", ReasonAuth, ReasonAuth)
	if len(n.Notices) != 1 || n.Notices[0].Text != "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; auth)" {
		t.Fatalf("%+v", n.Notices)
	}
	n = run("direct", ReasonAuth, ReasonAuth, ReasonAuth, ReasonAuth)
	if len(n.Notices) != 1 || n.Notices[0].Text != "↪️ Model Fallback: google/gemini (selected anthropic/claude; auth (+1 more attempts))" {
		t.Fatalf("%+v", n.Notices)
	}
	n = run("channel")
	ns := h.payloads("NoticeSent")
	if len(n.Notices) != 1 || n.Notices[0].Delivered || len(ns) != 1 || ns[0].(events.NoticeSent).Delivered ||
		ns[0].(events.NoticeSent).Text != "↪️ Model Fallback cleared: anthropic/claude (was google/gemini)" || h.sess.Notice != (NoticeState{}) {
		t.Fatalf("%+v %+v", n, ns)
	}
}
