package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// startRules starts turn-1 on the default chain (anthropic/claude,
// openai/gpt-5, google/gemini) under rules.
func startRules(t *testing.T, rules Rules) *harness {
	h := newHarness(t, testConfig())
	h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: rules}))
	return h
}

// markSwitch folds the live switch a user /model to sel marks on the
// harness's running turn.
func (h *harness) markSwitch(sel ModelRef) {
	h.t.Helper()
	out, err := SelectModel(h.sess, "s1", sel, SourceUser, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	out = append(out, MarkLiveSwitch([]TurnState{h.st}, "s1", sel, "", SourceUser)...)
	h.apply(Decision{Events: out}, nil)
}

// Only a user selection marks, only a running or waiting turn of the
// session decided by revision 3, the latest started.
func TestMarkLiveSwitch_WhoMarksWhat(t *testing.T) {
	run := func(id string, at int64, rules Rules, phase TurnPhase) TurnState {
		return TurnState{TurnID: id, Session: "s1", StartedAt: at, Rules: int(rules), Phase: phase}
	}
	gem := m("google", "gemini")
	cases := []struct {
		name   string
		turns  []TurnState
		source SelectionSource
		want   string
	}{
		{"user, running", []TurnState{run("a", t0, RulesV3, PhaseRunning)}, SourceUser, "a"},
		{"user, waiting", []TurnState{run("a", t0, RulesV3, PhaseWaiting)}, SourceUser, "a"},
		{"latest started", []TurnState{run("b", t0+1, RulesV3, PhaseRunning), run("a", t0, RulesV3, PhaseRunning)}, SourceUser, "b"},
		{"auto source", []TurnState{run("a", t0, RulesV3, PhaseRunning)}, SourceAuto, ""},
		{"default source", []TurnState{run("a", t0, RulesV3, PhaseRunning)}, SourceDefault, ""},
		{"cron source", []TurnState{run("a", t0, RulesV3, PhaseRunning)}, SourceCron, ""},
		{"revision 2 turn", []TurnState{run("a", t0, RulesV2, PhaseRunning)}, SourceUser, ""},
		{"finished turn", []TurnState{run("a", t0, RulesV3, PhaseSucceeded)}, SourceUser, ""},
		{"other session", []TurnState{{TurnID: "a", Session: "s2", Rules: 3, Phase: PhaseRunning}}, SourceUser, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := MarkLiveSwitch(tc.turns, "s1", gem, "google:inline", tc.source)
			got := ""
			if len(out) == 1 {
				mk := out[0].(events.LiveSwitchMarked)
				if mk.Model != gem || mk.ProfileID != "google:inline" || mk.Session != "s1" || mk.Source != "user" {
					t.Fatalf("mark %+v", mk)
				}
				got = mk.TurnID
			}
			if got != tc.want || len(out) > 1 {
				t.Fatalf("marked %q (%d events), want %q", got, len(out), tc.want)
			}
		})
	}
}

// The pending switch is taken at the turn's next step: a later candidate
// is called next (live_switch, nothing in between), outside the chain the
// turn ends switched, the current candidate is recorded and the run goes
// on; revision 2 ignores the mark.
func TestLiveSwitch_TakenAtTheNextStep(t *testing.T) {
	t.Run("later candidate after a failure", func(t *testing.T) {
		h := startRules(t, RulesV3)
		h.markSwitch(m("google", "gemini"))
		wantCall(t, h.outcome(failed(ReasonOverloaded)), "google", "gemini", "google:inline", KindLiveSwitch)
		steps := h.payloads("FallbackStepped")
		if len(steps) != 2 {
			t.Fatalf("%d FallbackStepped, want candidate_failed then live_switch", len(steps))
		}
		cf, ls := steps[0].(events.FallbackStepped), steps[1].(events.FallbackStepped)
		if cf.Decision != DecisionCandidateFailed || cf.FallbackStepToModel != "google/gemini" || cf.Reason != ReasonOverloaded {
			t.Fatalf("candidate_failed %+v", cf)
		}
		if ls.Decision != DecisionLiveSwitch || ls.Reason != ReasonUnknown || ls.FallbackStepFromModel != "anthropic/claude" ||
			ls.FallbackStepToModel != "google/gemini" || ls.FallbackStepFinalOutcome != StepNextFallback ||
			ls.ErrorPreview != "LiveSessionModelSwitchError: google/gemini was selected during the run; it is a later candidate of the chain" {
			t.Fatalf("live_switch %+v", ls)
		}
		if h.st.Switch != nil || h.st.Switched != m("google", "gemini") || h.st.Attempts != 2 {
			t.Fatalf("state switch %v switched %v attempts %d", h.st.Switch, h.st.Switched, h.st.Attempts)
		}
		// The answer on the selection shows no fallback notice.
		if n := h.outcome(Outcome{OK: true}); n.Kind != NextDone || len(n.Notices) != 0 {
			t.Fatalf("done %+v", n)
		}
	})
	t.Run("later candidate at the end of a retry wait", func(t *testing.T) {
		h := startRules(t, RulesV3)
		wait := h.outcome(failed(ReasonOverloaded))
		if wait.Kind != NextWait {
			t.Fatalf("want a retry wait, got %+v", wait)
		}
		h.markSwitch(m("openai", "gpt-5"))
		h.next = wait
		wantCall(t, h.resume(), "openai", "gpt-5", "openai:user", KindLiveSwitch)
	})
	t.Run("outside the chain", func(t *testing.T) {
		h := startRules(t, RulesV3)
		h.markSwitch(m("mistral", "large"))
		n := h.outcome(failed(ReasonOverloaded))
		want := "LiveSessionModelSwitchError: mistral/large was selected during the run; it is not in the candidate chain"
		if n.Kind != NextSwitch || n.SwitchTo != m("mistral", "large") || n.Message != want || h.st.Phase != PhaseSwitched {
			t.Fatalf("next %+v phase %s", n, h.st.Phase)
		}
		ts := h.payloads("TurnSwitched")[0].(events.TurnSwitched)
		if ts.Attempts != 1 || ts.Model != m("mistral", "large") || ts.Message != want {
			t.Fatalf("TurnSwitched %+v", ts)
		}
		// The failed candidate is recorded, with no next candidate.
		steps := h.payloads("FallbackStepped")
		if len(steps) != 1 {
			t.Fatalf("%d FallbackStepped, want one candidate_failed", len(steps))
		}
		cf := steps[0].(events.FallbackStepped)
		if cf.Decision != DecisionCandidateFailed || cf.Reason != ReasonOverloaded || cf.FallbackStepFromModel != "anthropic/claude" ||
			cf.FallbackStepToModel != "" || cf.NextCandidateProvider != "" || cf.FallbackStepFinalOutcome != StepSwitched ||
			cf.ConsoleMessage != "model fallback candidate_failed: anthropic/claude (overloaded) -> switched" {
			t.Fatalf("candidate_failed %+v", cf)
		}
	})
	t.Run("the current candidate: recorded, the run goes on", func(t *testing.T) {
		h := startRules(t, RulesV3)
		h.markSwitch(m("anthropic", "claude"))
		if n := h.outcome(failed(ReasonOverloaded)); n.Kind != NextWait {
			t.Fatalf("want the usual retry wait, got %+v", n)
		}
		ls := h.payloads("FallbackStepped")[0].(events.FallbackStepped)
		if ls.Decision != DecisionLiveSwitch || ls.FallbackStepFinalOutcome != StepContinue || ls.FallbackStepToModel != "" || h.st.Switch != nil {
			t.Fatalf("live_switch %+v", ls)
		}
	})
	t.Run("revision 2 ignores the mark", func(t *testing.T) {
		h := startRules(t, RulesV2)
		h.apply(Decision{Events: []events.Payload{events.LiveSwitchMarked{TurnID: "turn-1", Session: "s1", Model: m("google", "gemini"), Source: "user"}}}, nil)
		if n := h.outcome(failed(ReasonOverloaded)); n.Kind != NextWait {
			t.Fatalf("want the retry wait, got %+v", n)
		}
	})
}

// An answer that arrives with a user switch pending stands, but writes no
// auto pin of the old provider's profile (revision 3); revision 2 did.
func TestLiveSwitch_NoStalePin(t *testing.T) {
	for _, tc := range []struct {
		rules   Rules
		wantPin string
	}{{RulesV2, "anthropic:a"}, {RulesV3, ""}} {
		h := startRules(t, tc.rules)
		if tc.rules >= RulesV3 {
			h.markSwitch(m("google", "gemini"))
		} else {
			out, _ := SelectModel(h.sess, "s1", m("google", "gemini"), SourceUser, nil)
			h.apply(Decision{Events: out}, nil)
		}
		if n := h.outcome(Outcome{OK: true}); n.Kind != NextDone || n.AnsweredBy != m("anthropic", "claude") {
			t.Fatalf("rules %d: %+v", tc.rules, n)
		}
		if h.sess.Pin != tc.wantPin || h.sess.Model != m("google", "gemini") {
			t.Fatalf("rules %d: pin %q model %v, want pin %q", tc.rules, h.sess.Pin, h.sess.Model, tc.wantPin)
		}
	}
}

// The transport recovery: exactly the seed's conditions, at most twice a
// turn, no back-off, nothing counted against the profile.
func TestTransportRecovery_Conditions(t *testing.T) {
	reset := Outcome{Reason: ReasonTimeout, ToolBatchSettled: true, Error: events.ProviderErrorRecord{Code: "ECONNRESET", MessagePreview: "read ECONNRESET"}}
	with := func(f func(*Outcome)) Outcome { o := reset; f(&o); return o }
	cases := []struct {
		name  string
		rules Rules
		out   Outcome
		want  AttemptKind // the next call's kind; "" = a retry wait
	}{
		{"settled batch, reset before output", RulesV3, reset, KindTransportRecovery},
		{"no settled batch", RulesV3, with(func(o *Outcome) { o.ToolBatchSettled = false }), ""},
		{"partial response", RulesV3, with(func(o *Outcome) { o.OutputStarted = true }), KindFallback},
		{"unfinished tool batch", RulesV3, with(func(o *Outcome) { o.ToolStarted = true }), KindFallback},
		{"the provider answered 504", RulesV3, with(func(o *Outcome) { o.Error.Status = 504 }), ""},
		{"not a timeout", RulesV3, with(func(o *Outcome) { o.Reason = ReasonServerError }), ""},
		{"revision 2", RulesV2, reset, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startRules(t, tc.rules)
			n := h.outcome(tc.out)
			switch {
			case tc.want == "" && n.Kind != NextWait:
				t.Fatalf("next %+v, want the retry wait", n)
			case tc.want == KindFallback:
				wantCall(t, n, "anthropic", "claude", "anthropic:b", KindRotation)
			case tc.want == KindTransportRecovery:
				wantCall(t, n, "anthropic", "claude", "anthropic:a", KindTransportRecovery)
				if len(h.payloads("ProfileFailureRecorded")) != 0 || len(h.payloads("RetryScheduled")) != 0 {
					t.Fatal("a transport recovery counted a failure or waited")
				}
			}
		})
	}
	t.Run("twice a turn, then the usual path", func(t *testing.T) {
		h := startRules(t, RulesV3)
		wantCall(t, h.outcome(reset), "anthropic", "claude", "anthropic:a", KindTransportRecovery)
		wantCall(t, h.outcome(reset), "anthropic", "claude", "anthropic:a", KindTransportRecovery)
		if n := h.outcome(reset); n.Kind != NextWait || h.st.TransportRecoveries != 2 {
			t.Fatalf("third: %+v (recoveries %d), want the retry wait", n, h.st.TransportRecoveries)
		}
		af := h.payloads("AttemptFailed")
		if len(af) != 3 || !af[2].(events.AttemptFailed).ToolBatchSettled {
			t.Fatalf("AttemptFailed %v", af)
		}
	})
}

// A `/model p/m@profile` during the run pins that profile (user), and the
// jump to the selection calls it rather than the order's first.
func TestLiveSwitch_JumpUsesTheSelectionsPin(t *testing.T) {
	h := startRules(t, RulesV3)
	sel := m("openai", "gpt-5")
	out, err := SelectModel(h.sess, "s1", sel, SourceUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(TurnState{}, Env{Session: h.sess})
	w.Fold(out...)
	pin, err := h.cfg.PinProfile(w.Session(), "s1", "openai:key")
	if err != nil {
		t.Fatal(err)
	}
	out = append(append(out, pin...), MarkLiveSwitch([]TurnState{h.st}, "s1", sel, "openai:key", SourceUser)...)
	h.apply(Decision{Events: out}, nil)
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "openai", "gpt-5", "openai:key", KindLiveSwitch)
	// Without the pin the order's first (OAuth before API key) is called.
	h = startRules(t, RulesV3)
	h.markSwitch(sel)
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "openai", "gpt-5", "openai:user", KindLiveSwitch)
}

// A failure that qualifies for the transport recovery is not counted
// against the profile when a pending live switch is taken instead; once
// both recoveries are used it is counted as any failure.
func TestTransportRecovery_NotCountedWhenASwitchIsTaken(t *testing.T) {
	reset := Outcome{Reason: ReasonTimeout, ToolBatchSettled: true, Error: events.ProviderErrorRecord{Code: "ECONNRESET", MessagePreview: "read ECONNRESET"}}
	cases := []struct {
		name       string
		recoveries int // transport recoveries before the mark
		sel        ModelRef
		want       NextKind
		wantErrors int
	}{
		{"jump to a later candidate", 0, m("google", "gemini"), NextCall, 0},
		{"switched outside the chain", 0, m("mistral", "large"), NextSwitch, 0},
		{"recoveries used up", 2, m("google", "gemini"), NextCall, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startRules(t, RulesV3)
			for range tc.recoveries {
				wantCall(t, h.outcome(reset), "anthropic", "claude", "anthropic:a", KindTransportRecovery)
			}
			h.markSwitch(tc.sel)
			n := h.outcome(reset)
			if n.Kind != tc.want || n.Kind == NextCall && n.Call.Kind != KindLiveSwitch {
				t.Fatalf("next %+v %+v, want %s", n, n.Call, tc.want)
			}
			if got := h.profiles["anthropic:a"].ErrorCount; got != tc.wantErrors || len(h.payloads("ProfileFailureRecorded")) != tc.wantErrors {
				t.Fatalf("anthropic:a errorCount %d, want %d", got, tc.wantErrors)
			}
		})
	}
}
