package policy

import (
	"reflect"
	"testing"

	"github.com/fledger/fledger/events"
)

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
