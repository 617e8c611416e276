package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
)

// harness drives one session's turns like the engine would: it folds every
// decision's events into the turn, profile and session states.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

type harness struct {
	t        fataler
	cfg      Config
	profiles map[string]ProfileState
	sess     SessionState
	probeAt  map[string]int64
	st       TurnState
	now      int64
	log      []events.Payload
	next     Next
	// seq, when not 0, is the stream sequence of the last decision
	// applied: each apply is then one commit at the next sequence,
	// decided on the one before, noted with NoteSeq as the engine's fold
	// notes stored commits.
	seq uint64
}

func newHarness(t fataler, cfg Config) *harness {
	return &harness{t: t, cfg: cfg, profiles: map[string]ProfileState{}, sess: SessionState{Session: "s1"}, probeAt: map[string]int64{}, now: t0}
}

func (h *harness) env() Env {
	return Env{Config: &h.cfg, Profiles: h.profiles, ProbeAt: h.probeAt, Session: h.sess, Now: h.now}
}

func (h *harness) apply(d Decision, err error) Next {
	h.t.Helper()
	if err != nil {
		h.t.Fatal(err)
	}
	if h.seq > 0 {
		h.seq++
	}
	for _, p := range d.Events {
		h.log = append(h.log, p)
		switch p.EventAggregate() {
		case events.AggTurn:
			h.st = EvolveTurn(h.st, p)
			if a, ok := p.(events.AttemptStarted); ok && AttemptKind(a.Kind) == KindProbe && a.CandidateIndex == 0 {
				h.probeAt[a.Provider] = a.StartedAt
			}
			if h.seq > 0 {
				NoteSeq(&h.st, nil, p, h.seq, h.seq-1)
			}
		case events.AggSession:
			h.sess = EvolveSession(h.sess, p)
			if h.seq > 0 {
				NoteSeq(nil, &h.sess, p, h.seq, h.seq-1)
			}
		case events.AggProfile:
			id := events.KeyOf(p)
			h.profiles[id] = EvolveProfile(h.profiles[id], p)
		}
	}
	h.next = d.Next
	return d.Next
}

func (h *harness) start(sel Selection, chat string) Next {
	h.t.Helper()
	h.log = nil
	return h.apply(StartTurn(sel, h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: chat, Seed: 42}))
}

func (h *harness) selectDefault() Selection {
	sel, err := h.cfg.Select(h.sess, SelectRequest{Now: h.now})
	if err != nil {
		h.t.Fatal(err)
	}
	return sel
}

func (h *harness) outcome(o Outcome) Next {
	h.t.Helper()
	return h.apply(OnOutcome(h.st, h.env(), o))
}

func (h *harness) resume() Next {
	h.t.Helper()
	h.now = h.next.ResumeAt
	return h.apply(Resume(h.st, h.env()))
}

func failed(reason string) Outcome {
	return Outcome{Reason: reason, Error: events.ProviderErrorRecord{MessagePreview: reason + " error"}}
}

func (h *harness) payloads(typ string) []events.Payload {
	var out []events.Payload
	for _, p := range h.log {
		if p.EventType() == typ {
			out = append(out, p)
		}
	}
	return out
}

func wantCall(t *testing.T, n Next, provider, model, profile string, kind AttemptKind) {
	t.Helper()
	if n.Kind != NextCall || n.Call.Provider != provider || n.Call.Model != model || n.Call.ProfileID != profile || n.Call.Kind != kind {
		t.Fatalf("next = %+v %+v, want call %s/%s %s %s", n, n.Call, provider, model, profile, kind)
	}
}

func TestStep_TransientRetryBudgetThreeThenFallback(t *testing.T) {
	h := newHarness(t, testConfig())
	wantCall(t, h.start(h.selectDefault(), "direct"), "anthropic", "claude", "anthropic:a", KindFirst)
	for k := 1; k <= 3; k++ {
		n := h.outcome(failed(ReasonServerError))
		base := int64(1000) << (k - 1)
		rs := h.payloads("RetryScheduled")[k-1].(events.RetryScheduled)
		_, want := DefaultParams().JitteredDelay(k, rs.JitterSeed)
		if n.Kind != NextWait || rs.Retry != k || rs.Budget != 3 || rs.BaseMs != base || rs.DelayMs != want || n.WaitMs != want ||
			rs.JitterSeed != mixSeed(42, k) || want < base/2 || want >= base*3/2 || rs.WindowEndsAt != t0+90000 {
			t.Fatalf("retry %d: %+v next %+v", k, rs, n)
		}
		wantCall(t, h.resume(), "anthropic", "claude", "anthropic:a", KindRetry)
	}
	// Budget spent; server_error does not rotate profiles: next candidate.
	wantCall(t, h.outcome(failed(ReasonServerError)), "openai", "gpt-5", "openai:user", KindFallback)
	if len(h.payloads("ProfileFailureRecorded")) != 0 {
		t.Fatal("server_error touched profile health")
	}
	fs := h.payloads("FallbackStepped")[0].(events.FallbackStepped)
	if fs.Decision != "candidate_failed" || fs.FallbackStepFromModel != "anthropic/claude" || fs.FallbackStepToModel != "openai/gpt-5" ||
		fs.FallbackStepFinalOutcome != "next_fallback" || fs.FallbackStepChainPosition != 1 || fs.Total != 3 || !fs.IsPrimary {
		t.Fatalf("%+v", fs)
	}
}

func TestStep_RetryAfterIsAFloorAndCappedAt60s(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start(h.selectDefault(), "direct")
	o := failed(ReasonOverloaded)
	o.RetryAfterMs = 45000
	if n := h.outcome(o); n.Kind != NextWait || n.WaitMs != 45000 || n.ResumeAt != t0+45000 {
		t.Fatalf("%+v", n)
	}
	h.resume()
	o.RetryAfterMs = 60001
	// Longer than the SDK cap: surfaces at once; overloaded rotates once.
	wantCall(t, h.outcome(o), "anthropic", "claude", "anthropic:b", KindRotation)
}

func TestStep_NinetySecondWindowForNonRateLimitRetries(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start(h.selectDefault(), "direct")
	o := failed(ReasonTimeout)
	o.RetryAfterMs = 40000
	if n := h.outcome(o); n.WaitMs != 40000 {
		t.Fatalf("%+v", n)
	}
	h.resume() // t0+40000
	if n := h.outcome(o); n.WaitMs != 40000 || n.ResumeAt != t0+80000 {
		t.Fatalf("second retry fits (ends t0+80000 ≤ t0+90000): %+v", n)
	}
	h.resume() // t0+80000: t0+120000 would pass the window end
	n := h.outcome(o)
	wantCall(t, n, "anthropic", "claude", "anthropic:b", KindRotation)
	// A rate limit has no window (with retry.provider.maxRetryDelayMs
	// off: a 50 s wait otherwise rotates, TestStep_LongRateLimitWait*).
	cfg := testConfig()
	cfg.MaxRetryDelayMs = 0
	h2 := newHarness(t, cfg)
	h2.start(h2.selectDefault(), "direct")
	r := failed(ReasonRateLimit)
	r.RetryAfterMs = 50000
	for i := 0; i < 3; i++ {
		if n := h2.outcome(r); n.Kind != NextWait || n.WaitMs != 50000 {
			t.Fatalf("rate-limit retry %d: %+v", i+1, n)
		}
		h2.resume()
	}
}

func TestStep_ReplayUnsafeNeverRetried(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start(h.selectDefault(), "direct")
	o := failed(ReasonTimeout)
	o.OutputStarted = true
	wantCall(t, h.outcome(o), "anthropic", "claude", "anthropic:b", KindRotation)
}

func TestStep_OneRotationForRateLimitThenFallback(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	wantCall(t, h.outcome(failed(ReasonRateLimit)), "anthropic", "claude", "anthropic:b", KindRotation)
	wantCall(t, h.outcome(failed(ReasonRateLimit)), "openai", "gpt-5", "openai:user", KindFallback)
	recs := h.payloads("ProfileFailureRecorded")
	if len(recs) != 2 || recs[0].(events.ProfileFailureRecorded).CooldownUntil != t0+30000 ||
		recs[0].(events.ProfileFailureRecorded).CooldownModel != "claude" {
		t.Fatalf("%+v", recs)
	}
	// Strict chain (no later candidate): rotation is not capped.
	h2 := newHarness(t, cfg)
	h2.sess.Model, h2.sess.Source = m("anthropic", "claude"), SourceUser
	sel := h2.selectDefault()
	h2.start(sel, "direct")
	wantCall(t, h2.outcome(failed(ReasonRateLimit)), "anthropic", "claude", "anthropic:b", KindRotation)
	if n := h2.outcome(failed(ReasonRateLimit)); n.Kind != NextExhausted {
		t.Fatalf("%+v", n)
	}
}

func TestStep_StopConditions(t *testing.T) {
	cases := []struct {
		name     string
		out      Outcome
		strict   bool
		wantDisp string
		wantRsn  string
	}{
		{"compaction (context overflow)", Outcome{Reason: ReasonContextOverflow}, false, DispositionCompaction, ReasonContextOverflow},
		{"abort", Outcome{Reason: ReasonUnknown, Disposition: DispositionAbort}, false, DispositionAbort, ReasonUnknown},
		{"refusal", Outcome{Reason: ReasonUnclassified, Disposition: DispositionRefusal}, false, DispositionRefusal, ReasonUnclassified},
		{"coordination", Outcome{Reason: ReasonTimeout, Disposition: DispositionCoordination}, false, DispositionCoordination, ReasonTimeout},
		{"final unknown (no candidate left)", Outcome{Reason: ReasonUnknown}, true, DispositionFailover, ReasonUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			if tc.strict {
				h.sess.Model, h.sess.Source = m("anthropic", "claude"), SourceUser
				h.cfg.Profiles = h.cfg.Profiles[2:] // no anthropic profiles: nothing to rotate to
			}
			h.start(h.selectDefault(), "direct")
			n := h.outcome(tc.out)
			ts := h.payloads("TurnStopped")
			if n.Kind != NextStop || n.Disposition != tc.wantDisp || n.Reason != tc.wantRsn || len(ts) != 1 {
				t.Fatalf("%+v", n)
			}
			if tc.wantDisp != DispositionFailover && len(h.payloads("ProfileFailureRecorded")) != 0 {
				t.Fatal("a stop touched profile health")
			}
		})
	}
	// An unknown error with a candidate left advances.
	h := newHarness(t, testConfig())
	h.start(h.selectDefault(), "direct")
	h.cfg.MaxRetries = 0
	if n := h.outcome(Outcome{Reason: ReasonUnknown}); n.Kind != NextCall || n.Call.Model != "gpt-5" {
		t.Fatalf("%+v", n)
	}
}

func TestStep_RequestSizeCeilingAdvancesWithoutRetryOrHealth(t *testing.T) {
	h := newHarness(t, testConfig())
	h.start(h.selectDefault(), "direct")
	o := Outcome{Reason: ReasonContextOverflow, Status: 413, RequestSizeCeiling: true, CeilingTokens: []int64{8000, 8098}}
	wantCall(t, h.outcome(o), "openai", "gpt-5", "openai:user", KindFallback)
	if len(h.payloads("ProfileFailureRecorded")) != 0 || len(h.payloads("RetryScheduled")) != 0 {
		t.Fatal("ceiling retried or cooled the profile")
	}
	af := h.payloads("AttemptFailed")[0].(events.AttemptFailed)
	if af.Disposition != DispositionFailover || !reflect.DeepEqual(af.RequestSizeCeiling, []int64{8000, 8098}) {
		t.Fatalf("%+v", af)
	}
}

// Seed 003: every candidate failed only with overloaded → the whole chain
// again, up to 10 rounds, 2.5 s doubling to 30 s; the one notice exactly
// when 30 s have been waited (inside the 4th wait: 2.5 + 5 + 10 = 17.5 s
// before it, so 12.5 s into it), then the rest of that wait.
func TestStep_WholeChainOverloadRetry(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	cfg.Defaults.Fallbacks = []ModelRef{m("openai", "gpt-5")}
	for _, chat := range []string{"direct", "group"} {
		t.Run(chat, func(t *testing.T) {
			h := newHarness(t, cfg)
			h.start(h.selectDefault(), chat)
			wantDelays := []int64{2500, 5000, 10000, 20000, 30000, 30000, 30000, 30000, 30000, 30000}
			for round := 0; round <= 10; round++ {
				// Each pass: primary, rotation, fallback, rotation; all overloaded.
				for i := 0; i < 4; i++ {
					if h.next.Kind != NextCall || h.next.Call.Round != round {
						t.Fatalf("round %d call %d: %+v", round, i, h.next)
					}
					h.outcome(failed(ReasonOverloaded))
				}
				if round == 10 {
					break
				}
				at := h.now
				if round == 3 {
					if h.next.Kind != NextWait || h.next.WaitMs != 12500 || h.next.ResumeAt != at+12500 || len(h.next.Notices) != 0 {
						t.Fatalf("4th wait must wake at the notice point: %+v", h.next)
					}
					n := h.resume()
					if h.now != t0+30000 || len(n.Notices) != 1 || n.Notices[0].Text != OverloadNoticeText ||
						n.Notices[0].Kind != NoticeOverloadWait || n.Notices[0].Delivered != (chat == "direct") {
						t.Fatalf("notice at %d: %+v", h.now-t0, n)
					}
					if n.Kind != NextWait || n.WaitMs != 7500 || n.ResumeAt != at+20000 {
						t.Fatalf("rest of the wait: %+v", n)
					}
				} else if h.next.Kind != NextWait || h.next.WaitMs != wantDelays[round] || h.next.ResumeAt != at+wantDelays[round] {
					t.Fatalf("round %d: %+v", round+1, h.next)
				}
				cr := h.payloads("ChainRetryScheduled")
				if e := cr[len(cr)-1].(events.ChainRetryScheduled); e.Round != round+1 || e.DelayMs != wantDelays[round] || e.ResumeAt != at+wantDelays[round] {
					t.Fatalf("%+v", e)
				}
				n := h.resume()
				if len(n.Notices) != 0 || n.Call.Kind != KindChainRetry || n.Call.Round != round+1 || n.Call.Model != "claude" {
					t.Fatalf("round %d: %+v %+v", round+1, n, n.Call)
				}
			}
			if h.next.Kind != NextExhausted || h.now != t0+2500+5000+10000+20000+6*30000 {
				t.Fatalf("after 10 rounds: %+v at %d", h.next, h.now-t0)
			}
			if got := len(h.payloads("NoticeSent")); got != 1 {
				t.Fatalf("%d overload notices", got)
			}
			if got := len(h.payloads("ChainRetryScheduled")); got != 10 {
				t.Fatalf("%d rounds", got)
			}
		})
	}
	t.Run("no retry once a tool ran or output started", func(t *testing.T) {
		h := newHarness(t, cfg)
		h.start(h.selectDefault(), "direct")
		o := failed(ReasonOverloaded)
		o.ToolStarted = true
		for i := 0; i < 4; i++ {
			h.outcome(o)
		}
		if h.next.Kind != NextExhausted || len(h.payloads("ChainRetryScheduled")) != 0 {
			t.Fatalf("%+v", h.next)
		}
	})
	t.Run("not when another reason is mixed in", func(t *testing.T) {
		h := newHarness(t, cfg)
		h.start(h.selectDefault(), "direct")
		h.outcome(failed(ReasonOverloaded))
		h.outcome(failed(ReasonOverloaded))
		h.outcome(failed(ReasonModelNotFound))
		if h.next.Kind != NextExhausted {
			t.Fatalf("%+v", h.next)
		}
	})
	// OpenClaw 2026.9.6 has no whole-chain retry: rounds 0.
	t.Run("rounds 0 (OpenClaw 2026.9.6)", func(t *testing.T) {
		c := cfg
		c.ChainOverloadRounds = 0
		h := newHarness(t, c)
		h.start(h.selectDefault(), "direct")
		for i := 0; i < 4; i++ {
			h.outcome(failed(ReasonOverloaded))
		}
		if h.next.Kind != NextExhausted || len(h.payloads("ChainRetryScheduled")) != 0 {
			t.Fatalf("%+v", h.next)
		}
		if want := "All models failed (2): anthropic/claude: overloaded error (overloaded) | openai/gpt-5: overloaded error (overloaded)"; h.next.Summary != want {
			t.Fatalf("%q", h.next.Summary)
		}
	})
}

func TestStep_ExhaustionSummaryAndSoonestExpiry(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	cfg.Defaults.Fallbacks = []ModelRef{m("openai", "gpt-5")}
	h := newHarness(t, cfg)
	h.start(h.selectDefault(), "direct")
	h.outcome(Outcome{Reason: ReasonAuth, Status: 401, Error: events.ProviderErrorRecord{MessagePreview: "bad key"}})
	h.outcome(Outcome{Reason: ReasonAuth, Status: 401, Error: events.ProviderErrorRecord{MessagePreview: "bad key"}})
	h.outcome(Outcome{Reason: ReasonBilling, Status: 402, Error: events.ProviderErrorRecord{MessagePreview: "insufficient credits"}})
	n := h.outcome(Outcome{Reason: ReasonBilling, Status: 402, Error: events.ProviderErrorRecord{MessagePreview: "insufficient credits"}})
	want := "All models failed (2): anthropic/claude: bad key (auth) | openai/gpt-5: insufficient credits (billing)"
	if n.Kind != NextExhausted || n.Summary != want {
		t.Fatalf("%q", n.Summary)
	}
	if n.SoonestCooldownExpiry != t0+30000 || len(n.Attempts) != 2 || n.Attempts[1].Status != 402 {
		t.Fatalf("%+v", n)
	}
	te := h.payloads("TurnExhausted")[0].(events.TurnExhausted)
	if te.Summary != want || te.Reason != ReasonBilling {
		t.Fatalf("%+v", te)
	}
}

func TestStep_SkipAndProbeTexts(t *testing.T) {
	cool := func(reason string, until int64) ProfileState {
		return ProfileState{CooldownUntil: until, CooldownReason: reason}
	}
	t.Run("auth skips the whole provider", func(t *testing.T) {
		h := newHarness(t, testConfig())
		h.profiles["anthropic:a"], h.profiles["anthropic:b"] = cool(ReasonAuth, t0+600000), cool(ReasonAuth, t0+600000)
		wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFallback)
		cs := h.payloads("CandidateSkipped")[0].(events.CandidateSkipped)
		if cs.Message != "Provider anthropic has auth issue (skipping all models)" || cs.Decision != "skip" {
			t.Fatalf("%+v", cs)
		}
	})
	t.Run("billing non-primary suspends", func(t *testing.T) {
		h := newHarness(t, testConfig())
		h.profiles["openai:user"] = ProfileState{DisabledUntil: t0 + 600000, DisabledReason: ReasonBilling}
		h.profiles["openai:key"] = ProfileState{DisabledUntil: t0 + 600000, DisabledReason: ReasonBilling}
		h.start(h.selectDefault(), "direct")
		h.cfg.MaxRetries = 0
		wantCall(t, h.outcome(failed(ReasonModelNotFound)), "google", "gemini", "google:inline", KindFallback)
		cs := h.payloads("CandidateSkipped")[0].(events.CandidateSkipped)
		if cs.Message != "Provider openai is in cooldown" || cs.Decision != "suspend" || cs.Reason != ReasonBilling || cs.SoonestExpiry != t0+600000 {
			t.Fatalf("%+v", cs)
		}
	})
	t.Run("one transient probe per provider per run", func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxRetries = 0
		cfg.Defaults.Fallbacks = []ModelRef{m("openai", "gpt-5"), m("openai", "gpt-5-mini")}
		h := newHarness(t, cfg)
		h.profiles["openai:user"], h.profiles["openai:key"] = cool(ReasonRateLimit, t0+300000), cool(ReasonRateLimit, t0+300000)
		h.start(h.selectDefault(), "direct")
		n := h.outcome(failed(ReasonModelNotFound))
		if n.Call.Kind != KindProbe || n.Call.Model != "gpt-5" {
			t.Fatalf("%+v", n.Call)
		}
		n = h.outcome(failed(ReasonRateLimit))
		cs := h.payloads("CandidateSkipped")[0].(events.CandidateSkipped)
		if cs.Message != "Provider openai is in cooldown (probe already attempted this run)" || cs.Model != "gpt-5-mini" {
			t.Fatalf("%+v", cs)
		}
		if n.Kind != NextExhausted && n.Call.Provider != "anthropic" {
			t.Fatalf("%+v", n)
		}
	})
	t.Run("primary probe near expiry, throttled per provider", func(t *testing.T) {
		h := newHarness(t, testConfig())
		h.profiles["anthropic:a"], h.profiles["anthropic:b"] = cool(ReasonTimeout, t0+120000), cool(ReasonTimeout, t0+200000)
		wantCall(t, h.start(h.selectDefault(), "direct"), "anthropic", "claude", "anthropic:a", KindProbe)
		// 1 ms further from expiry: no probe, suspended.
		h2 := newHarness(t, testConfig())
		h2.profiles["anthropic:a"], h2.profiles["anthropic:b"] = cool(ReasonTimeout, t0+120001), cool(ReasonTimeout, t0+200000)
		wantCall(t, h2.start(h2.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFallback)
		if cs := h2.payloads("CandidateSkipped")[0].(events.CandidateSkipped); cs.Message != "Provider anthropic is in cooldown" {
			t.Fatalf("%+v", cs)
		}
		// Throttle: a probe 29 999 ms ago blocks; 30 000 ms ago allows.
		h3 := newHarness(t, testConfig())
		h3.profiles["anthropic:a"], h3.profiles["anthropic:b"] = cool(ReasonTimeout, t0+1000), cool(ReasonTimeout, t0+1000)
		h3.probeAt["anthropic"] = t0 - 29999
		wantCall(t, h3.start(h3.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFallback)
		h3.probeAt["anthropic"] = t0 - 30000
		wantCall(t, h3.start(h3.selectDefault(), "direct"), "anthropic", "claude", "anthropic:a", KindProbe)
	})
	t.Run("skip cache for non-primary auth failures", func(t *testing.T) {
		cfg := testConfig()
		cfg.SkipCacheTTLMs = 60000
		h := newHarness(t, cfg)
		h.profiles["anthropic:a"], h.profiles["anthropic:b"] = cool(ReasonTimeout, t0+600000), cool(ReasonTimeout, t0+600000)
		e := h.env()
		e.SkipMarks = map[string]SkipMark{SkipKey("s1", "openai", "gpt-5", "openai:user"): {At: t0 - 59999, Reason: ReasonAuth}}
		d, err := StartTurn(h.selectDefault(), e, StartInput{TurnID: "t", Session: "s1", Chat: "direct"})
		h.apply(d, err)
		cs := h.payloads("CandidateSkipped")
		want := "Skipping openai/gpt-5: recent auth failure in this session (run `openclaw models auth login --provider openai` to re-authenticate)"
		if len(cs) != 2 || cs[1].(events.CandidateSkipped).Message != want {
			t.Fatalf("%+v", cs)
		}
	})
}

func TestNotices_OncePerStateChange(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	turn := func(failPrimary bool) Next {
		h.profiles = map[string]ProfileState{}
		h.start(h.selectDefault(), "direct")
		if failPrimary {
			h.outcome(failed(ReasonRateLimit))
			h.outcome(failed(ReasonRateLimit))
		}
		return h.outcome(Outcome{OK: true})
	}
	n := turn(true)
	want := "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude; rate limit)"
	if len(n.Notices) != 1 || n.Notices[0].Text != want || !n.Notices[0].Delivered || n.AnsweredBy != m("openai", "gpt-5") {
		t.Fatalf("%+v", n)
	}
	if h.sess.Notice != (NoticeState{Selected: "anthropic/claude", Active: "openai/gpt-5", Reason: "rate limit"}) {
		t.Fatalf("%+v", h.sess.Notice)
	}
	if h.sess.Model != (ModelRef{}) {
		t.Fatal("fallback wrote the session's selected model")
	}
	if n := turn(true); len(n.Notices) != 0 {
		t.Fatalf("repeated notice: %+v", n.Notices)
	}
	n = turn(false)
	if len(n.Notices) != 1 || n.Notices[0].Text != "↪️ Model Fallback cleared: anthropic/claude (was openai/gpt-5)" {
		t.Fatalf("%+v", n.Notices)
	}
	if n := turn(false); len(n.Notices) != 0 {
		t.Fatal("cleared twice")
	}
	// Group chats: state and events recorded, notice not delivered.
	h.profiles = map[string]ProfileState{}
	h.start(h.selectDefault(), "group")
	h.outcome(failed(ReasonRateLimit))
	h.outcome(failed(ReasonRateLimit))
	n = h.outcome(Outcome{OK: true})
	if len(n.Notices) != 1 || n.Notices[0].Delivered || h.sess.Notice.Active != "openai/gpt-5" {
		t.Fatalf("%+v", n)
	}
}

func TestReasonSummary(t *testing.T) {
	at := []events.ExhaustedAttempt{{Reason: ReasonRateLimit}, {Reason: ReasonAuth}, {Reason: ReasonBilling}}
	if got := ReasonSummary(at); got != "rate limit (+2 more attempts)" {
		t.Fatal(got)
	}
	if got := ReasonSummary([]events.ExhaustedAttempt{{Status: 503}}); got != "HTTP 503" {
		t.Fatal(got)
	}
	if got := FallbackClearedNoticeText("a/b", ""); got != "↪️ Model Fallback cleared: a/b" {
		t.Fatal(got)
	}
}

func TestStep_UserPinSurvivesCooldownAndIsPreferredAgain(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, cfg)
	h.sess.Pin, h.sess.PinProvider, h.sess.PinSource = "anthropic:b", "anthropic", PinUser
	h.profiles["anthropic:b"] = ProfileState{CooldownUntil: t0 + 30000, CooldownReason: ReasonAuth}
	wantCall(t, h.start(h.selectDefault(), "direct"), "anthropic", "claude", "anthropic:a", KindFirst)
	h.outcome(Outcome{OK: true})
	if h.sess.Pin != "anthropic:b" || h.sess.PinSource != PinUser || len(h.payloads("SessionAuthPinned")) != 0 {
		t.Fatalf("user pin replaced: %+v", h.sess)
	}
	h.now = t0 + 30000
	wantCall(t, h.start(h.selectDefault(), "direct"), "anthropic", "claude", "anthropic:b", KindFirst)
}

func TestStep_AutoPinAndAutoOverrideRecovery(t *testing.T) {
	h := newHarness(t, testConfig())
	h.sess.Model, h.sess.Source, h.sess.Origin = m("openai", "gpt-5"), SourceAuto, m("anthropic", "claude")
	sel, _ := h.cfg.Select(h.sess, SelectRequest{Now: t0, LastAutoProbeAt: 0})
	wantCall(t, h.start(sel, "direct"), "anthropic", "claude", "anthropic:a", KindFirst)
	h.outcome(Outcome{OK: true})
	if h.sess.Model != (ModelRef{}) || h.sess.Pin != "anthropic:a" || h.sess.PinSource != PinAuto {
		t.Fatalf("%+v", h.sess)
	}
	// A user selection made meanwhile is never undone by recovery.
	h2 := newHarness(t, testConfig())
	h2.sess.Model, h2.sess.Source, h2.sess.Origin = m("openai", "gpt-5"), SourceAuto, m("anthropic", "claude")
	sel, _ = h2.cfg.Select(h2.sess, SelectRequest{Now: t0})
	h2.start(sel, "direct")
	h2.sess = EvolveSession(h2.sess, events.SessionModelSelected{Session: "s1", Model: m("google", "gemini"), Source: string(SourceUser)})
	h2.outcome(Outcome{OK: true})
	if h2.sess.Model != m("google", "gemini") || h2.sess.Source != SourceUser {
		t.Fatalf("recovery undid a user selection: %+v", h2.sess)
	}
}

func TestStep_Errors(t *testing.T) {
	h := newHarness(t, testConfig())
	if _, err := OnOutcome(h.st, h.env(), Outcome{OK: true}); !errors.Is(err, ErrTurnNotRunning) {
		t.Fatal(err)
	}
	h.start(h.selectDefault(), "direct")
	if _, err := OnOutcome(h.st, h.env(), Outcome{Reason: "nope"}); !errors.Is(err, ErrBadReason) {
		t.Fatal(err)
	}
	if _, err := Resume(h.st, h.env()); !errors.Is(err, ErrTurnNotWaiting) {
		t.Fatal(err)
	}
	h.outcome(failed(ReasonTimeout))
	if _, err := Resume(h.st, h.env()); !errors.Is(err, ErrWaitNotOver) {
		t.Fatal(err)
	}
	if _, err := StartTurn(Selection{}, h.env(), StartInput{}); !errors.Is(err, ErrBadChain) {
		t.Fatal(err)
	}
	if s := ExhaustionSummary(nil); !strings.HasPrefix(s, "All models failed (0)") {
		t.Fatal(s)
	}
}
