package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// startSeq starts turn-1 on the default chain under rules, with stream
// sequences noted: sequence 1 is the session's first command before it
// (none), the start is the commit at 2, decided on 1.
func startSeq(t *testing.T, rules Rules) *harness {
	h := newHarness(t, testConfig())
	h.seq = 1
	h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: rules}))
	return h
}

// selectOnly folds a user /model to sel with the profile pinned by the
// same command, as the commit of a selection decided on a state that did
// not hold the running turn: no LiveSwitchMarked.
func (h *harness) selectOnly(sel ModelRef, source SelectionSource) {
	h.t.Helper()
	out, err := SelectModel(h.sess, "s1", sel, source, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.apply(Decision{Events: out}, nil)
}

// Rule revision 5: a user selection stored after the turn's start was
// decided, with no mark naming the turn, is taken at the turn's next step
// as the mark it would have had; once (its live_switch record is noted),
// and not by earlier revisions, nor for a selection of another source.
func TestLiveSwitch_DerivedFromARacingSelection(t *testing.T) {
	gem, gpt := m("google", "gemini"), m("openai", "gpt-5")
	cases := []struct {
		name   string
		rules  Rules
		source SelectionSource
		sel    ModelRef
		// wantProvider/wantModel/wantKind: the call after the first
		// failure; wantNext: the Next when it is no call.
		wantProvider, wantModel string
		wantKind                AttemptKind
		wantNext                NextKind
	}{
		{name: "later candidate", rules: RulesV5, source: SourceUser, sel: gem, wantProvider: "google", wantModel: "gemini", wantKind: KindLiveSwitch},
		{name: "next candidate", rules: RulesV5, source: SourceUser, sel: gpt, wantProvider: "openai", wantModel: "gpt-5", wantKind: KindLiveSwitch},
		{name: "outside the chain", rules: RulesV5, source: SourceUser, sel: m("mistral", "large"), wantNext: NextSwitch},
		{name: "revision 4 takes no derived switch", rules: RulesV4, source: SourceUser, sel: gem, wantNext: NextWait},
		{name: "an auto selection marks nothing", rules: RulesV5, source: SourceAuto, sel: gem, wantNext: NextWait},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := startSeq(t, tc.rules)
			h.selectOnly(tc.sel, tc.source)
			n := h.outcome(failed(ReasonOverloaded))
			switch tc.wantNext {
			case NextSwitch:
				if n.Kind != NextSwitch || n.SwitchTo != tc.sel || len(h.payloads("TurnSwitched")) != 1 {
					t.Fatalf("next %+v, want switch to %s with a TurnSwitched", n, tc.sel)
				}
				return
			case NextWait:
				// No switch: the overloaded candidate's retry, as before.
				if n.Kind != NextWait || liveSwitchRecords(h) != 0 {
					t.Fatalf("next %+v, want the retry's wait and no live_switch record", n)
				}
				return
			}
			if n.Kind != NextCall || n.Call.Provider != tc.wantProvider || n.Call.Model != tc.wantModel || n.Call.Kind != tc.wantKind {
				t.Fatalf("next %+v %+v, want a %s call of %s/%s", n, n.Call, tc.wantKind, tc.wantProvider, tc.wantModel)
			}
			if got := liveSwitchRecords(h); got != 1 {
				t.Fatalf("%d live_switch records, want 1", got)
			}
			// Taken once: the next failure walks the chain on.
			h.outcome(failed(ReasonOverloaded))
			if got := liveSwitchRecords(h); got != 1 {
				t.Fatalf("%d live_switch records after the next failure, want still 1", got)
			}
			if h.st.Switched != tc.sel {
				t.Fatalf("switched %v, want %v", h.st.Switched, tc.sel)
			}
		})
	}
}

// After a derived jump the turn's answer on the selection writes its auto
// pin, as after a marked one: the selection it took is not a command that
// replaced the one it ran on (SwitchedBasis).
func TestLiveSwitch_DerivedJumpKeepsTheAutoPin(t *testing.T) {
	for _, marked := range []bool{true, false} {
		h := startSeq(t, RulesV5)
		if marked {
			h.markSwitch(m("google", "gemini"))
		} else {
			h.selectOnly(m("google", "gemini"), SourceUser)
		}
		wantCall(t, h.outcome(failed(ReasonOverloaded)), "google", "gemini", "google:inline", KindLiveSwitch)
		if n := h.outcome(Outcome{OK: true}); n.Kind != NextDone {
			t.Fatalf("marked %v: %+v", marked, n)
		}
		var pins []string
		for _, p := range h.payloads("SessionAuthPinned") {
			pins = append(pins, p.(events.SessionAuthPinned).ProfileID+" "+p.(events.SessionAuthPinned).Source)
		}
		if len(pins) != 1 || pins[0] != "google:inline auto" {
			t.Fatalf("marked %v: pins %v, want [google:inline auto]", marked, pins)
		}
	}
}

// A newer selection no mark names replaces an older pending mark (the
// mark went to this turn, the newer selection's to a later-started one):
// the turn takes the newer, as it would a later mark.
func TestLiveSwitch_NewerSelectionReplacesAPendingMark(t *testing.T) {
	h := startSeq(t, RulesV5)
	h.markSwitch(m("google", "gemini"))
	h.selectOnly(m("openai", "gpt-5"), SourceUser)
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "openai", "gpt-5", "openai:user", KindLiveSwitch)
	if got := liveSwitchRecords(h); got != 1 {
		t.Fatalf("%d live_switch records, want 1", got)
	}
}

// A start decided on a state without the selection and stored after it
// (the selection at 2, the start at 3 decided on 1) starts on the model
// before it, then takes the selection at its next step; a selection the
// start's state held (stored before its basis) is no switch.
func TestLiveSwitch_DerivedForAStartDecidedBeforeTheSelection(t *testing.T) {
	gem := m("google", "gemini")
	for _, tc := range []struct {
		name       string
		basis      uint64
		wantSwitch bool
	}{
		{"start decided before the selection", 1, true},
		{"start decided on the selection", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			h.seq = 1
			start, err := StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: RulesV5})
			if err != nil {
				t.Fatal(err)
			}
			h.selectOnly(gem, SourceUser)
			h.apply(start, nil)
			h.st.StartBasis = tc.basis
			n := h.outcome(failed(ReasonOverloaded))
			if got := n.Kind == NextCall && n.Call.Provider == "google" && n.Call.Kind == KindLiveSwitch; got != tc.wantSwitch {
				t.Fatalf("next %+v: switched %v, want %v", n, got, tc.wantSwitch)
			}
		})
	}
}

// A marked selection is taken as marked and not derived a second time.
func TestLiveSwitch_MarkedSelectionIsNotDerivedAgain(t *testing.T) {
	h := startSeq(t, RulesV5)
	h.markSwitch(m("google", "gemini"))
	wantCall(t, h.outcome(failed(ReasonOverloaded)), "google", "gemini", "google:inline", KindLiveSwitch)
	h.outcome(failed(ReasonOverloaded))
	if got := liveSwitchRecords(h); got != 1 {
		t.Fatalf("%d live_switch records, want 1", got)
	}
}

func liveSwitchRecords(h *harness) int {
	n := 0
	for _, p := range h.payloads("FallbackStepped") {
		if p.(events.FallbackStepped).Decision == DecisionLiveSwitch {
			n++
		}
	}
	return n
}
