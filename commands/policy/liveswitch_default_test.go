package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// `/model default` during a turn (issue 23): from revision 3 it marks a
// live switch to the default primary, taken like any other, and the turn
// writes no auto pin after the user's clear; revision 2 marked nothing and
// pinned.
func TestLiveSwitch_ModelDefault(t *testing.T) {
	claude, gpt := m("anthropic", "claude"), m("openai", "gpt-5")
	origin := claude
	cases := []struct {
		name   string
		rules  Rules
		source SelectionSource
		origin *ModelRef
		// steps after the clear: outcomes of the calls, in order.
		outs     []Outcome
		wantKind NextKind
		wantCall string // "provider/model kind" of the last call ("" = none)
		wantPin  string
		wantMark bool
	}{
		{"answer stood", RulesV3, SourceUser, nil, []Outcome{{OK: true}}, NextDone, "", "", true},
		{"answer stood, revision 2", RulesV2, SourceUser, nil, []Outcome{{OK: true}}, NextDone, "", "openai:user", false},
		{"outside the strict chain: switched", RulesV3, SourceUser, nil, []Outcome{failed(ReasonOverloaded)}, NextSwitch, "", "", true},
		{"later candidate: jump", RulesV3, SourceAuto, nil, []Outcome{failed(ReasonOverloaded), {OK: true}}, NextDone, "anthropic/claude live_switch", "", true},
		{"current candidate: continue, no pin", RulesV3, SourceAuto, &origin, []Outcome{failed(ReasonOverloaded), {OK: true}}, NextDone, "anthropic/claude retry", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, testConfig())
			sel, err := SelectModel(h.sess, "s1", gpt, tc.source, tc.origin)
			if err != nil {
				t.Fatal(err)
			}
			h.apply(Decision{Events: sel}, nil)
			h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: tc.rules}))
			clear := append(h.cfg.ClearModel(h.sess, "s1", ""), h.cfg.MarkDefaultSwitch([]TurnState{h.st}, "s1", "", h.sess.Model != ModelRef{})...)
			h.apply(Decision{Events: clear}, nil)
			if marks := h.payloads("LiveSwitchMarked"); (len(marks) == 1) != tc.wantMark ||
				tc.wantMark && marks[0].(events.LiveSwitchMarked).Model != claude {
				t.Fatalf("marks %+v, want one to %s: %v", marks, claude, tc.wantMark)
			}
			var n Next
			for _, o := range tc.outs {
				n = h.outcome(o)
				if n.Kind == NextWait {
					n = h.resume()
				}
				if n.Kind == NextCall {
					if got := n.Call.Provider + "/" + n.Call.Model + " " + string(n.Call.Kind); got != tc.wantCall {
						t.Fatalf("call %s, want %s", got, tc.wantCall)
					}
				}
			}
			if n.Kind != tc.wantKind || tc.wantKind == NextSwitch && n.SwitchTo != claude {
				t.Fatalf("next %+v, want %s", n, tc.wantKind)
			}
			if h.sess.Pin != tc.wantPin || h.sess.Model != (ModelRef{}) {
				t.Fatalf("pin %q model %v, want pin %q and no model", h.sess.Pin, h.sess.Model, tc.wantPin)
			}
		})
	}
	t.Run("no override to clear: no mark", func(t *testing.T) {
		h := startRules(t, RulesV3)
		if out := h.cfg.MarkDefaultSwitch([]TurnState{h.st}, "s1", "", false); out != nil {
			t.Fatalf("marked %+v", out)
		}
	})
}

// A switch outside the chain taken at the end of a whole-chain overload
// wait has its own record saying switched (the failures' records were
// written before the wait): strict user selection gpt-5 overloaded, then
// `/model default` during the wait.
func TestLiveSwitch_SwitchedAtTheEndOfAChainWait(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRetries = 0
	h := newHarness(t, cfg)
	sel, err := SelectModel(h.sess, "s1", m("openai", "gpt-5"), SourceUser, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(Decision{Events: sel}, nil)
	h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: RulesV3}))
	n := h.next
	for i := 0; n.Kind == NextCall && i < 4; i++ {
		n = h.outcome(failed(ReasonOverloaded))
	}
	if n.Kind != NextWait || h.st.Pending != PendingChain {
		t.Fatalf("next %+v pending %q, want the whole-chain wait", n, h.st.Pending)
	}
	h.log = nil
	h.apply(Decision{Events: append(h.cfg.ClearModel(h.sess, "s1", ""), h.cfg.MarkDefaultSwitch([]TurnState{h.st}, "s1", "", true)...)}, nil)
	h.next = n
	if n = h.resume(); n.Kind != NextSwitch || n.SwitchTo != m("anthropic", "claude") {
		t.Fatalf("next %+v, want switched to anthropic/claude", n)
	}
	steps := h.payloads("FallbackStepped")
	if len(steps) != 1 {
		t.Fatalf("%d FallbackStepped after the wait, want one", len(steps))
	}
	got := steps[0].(events.FallbackStepped)
	if got.Decision != DecisionLiveSwitch || got.Reason != ReasonUnknown || got.FallbackStepFinalOutcome != StepSwitched ||
		got.FallbackStepFromModel != "openai/gpt-5" || got.FallbackStepToModel != "" || got.NextCandidateModel != "" ||
		got.ErrorPreview != "LiveSessionModelSwitchError: anthropic/claude was selected during the run; it is not in the candidate chain" ||
		got.ConsoleMessage != "model fallback live_switch: anthropic/claude selected, outside the chain -> switched" {
		t.Fatalf("record %+v", got)
	}
	if ts := h.payloads("TurnSwitched"); len(ts) != 1 || h.st.Phase != PhaseSwitched {
		t.Fatalf("TurnSwitched %v phase %s", ts, h.st.Phase)
	}
}
