package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/replay"
)

// A user `/model` and a turn's begin on the same session at once, on two
// instances, neither seeing the other (rule revision 5): the selection
// decided on a state without the turn and stored after its start (no
// mark), or the start decided on a state without the selection and
// stored after it (the turn starts on the model before it). Forced with
// a hook that runs the other write, whole, between one's decision and
// its append. In both orders the turn takes the selection at its next
// step as a live switch to it (the selected later candidate, kind
// live_switch), though no LiveSwitchMarked names it, explain shows the
// selection where it is stored, and replay --verify re-decides the
// ledger.
func TestRace_ModelAndBeginUnseen(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	for _, tc := range []struct {
		name string
		// first decides and, in its hook before its append, runs second
		// to the end.
		selectionFirst bool
	}{
		{"selection stored after the start", true},
		{"start stored after the selection", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn, session := "t-"+strings.ReplaceAll(tc.name, " ", "-"), "s-"+strings.ReplaceAll(tc.name, " ", "-")
			begin := func() error {
				_, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: turn, Session: session})
				return err
			}
			sel := func() error {
				_, err := b.SelectModel(ctx, session, gpt, string(policy.SourceUser), nil, "")
				return err
			}
			first, second, hooked, want := sel, begin, b, ".session."
			if !tc.selectionFirst {
				first, second, hooked, want = begin, sel, a, ".turn."
			}
			var secondErr error
			stop := raceFirstAppend(hooked, want, func() { secondErr = second() })
			err := first()
			stop()
			if err != nil || secondErr != nil {
				t.Fatalf("first: %v, second: %v", err, secondErr)
			}
			if err := a.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			step, err := a.ReportOutcome(ctx, turn, engine.AttemptReport{Attempt: 1, Err: overloaded()})
			if err != nil {
				t.Fatal(err)
			}
			if step.Next.Kind == policy.NextWait {
				clock.advanceTo(step.Next.ResumeAt)
				if step, err = a.ResumeTurn(ctx, turn); err != nil {
					t.Fatal(err)
				}
			}
			c := step.Next.Call
			if step.Next.Kind != policy.NextCall || c.Provider != "openai" || c.Model != "gpt-5" || c.Kind != policy.KindLiveSwitch {
				t.Fatalf("next %+v %+v, want a live_switch call of openai/gpt-5", step.Next, c)
			}
			var started, selected uint64
			var basis uint64
			for cm := range commitsOf(t, st) {
				for _, ev := range cm {
					switch e := ev.Data.(type) {
					case events.TurnStarted:
						if e.TurnID == turn {
							started, basis = ev.Seq, ev.Basis
						}
					case events.SessionModelSelected:
						if e.Session == session {
							selected = ev.Seq
						}
					case events.LiveSwitchMarked:
						if e.TurnID == turn {
							t.Fatalf("a LiveSwitchMarked at %d: the race did not happen", ev.Seq)
						}
					}
				}
			}
			if tc.selectionFirst && !(selected > started) || !tc.selectionFirst && !(basis < selected && selected < started) {
				t.Fatalf("selection at %d, start at %d decided on %d: not the order forced", selected, started, basis)
			}
			// Explain shows the selection no mark names, where it is.
			said := fmt.Sprintf("the user selected openai/gpt-5 while the turn ran (seq %d), decided on a state without this turn, so no switch was marked: a pending live switch, taken at the next step (rule revision 5)", selected)
			if !tc.selectionFirst {
				said = fmt.Sprintf("the user selected openai/gpt-5 (seq %d) after this turn's start was decided (on seq %d): the turn started on the model before it; a pending live switch, taken at the next step (rule revision 5)", selected, basis)
			}
			x, err := replay.Explain(ctx, st, "main", turn)
			if err != nil {
				t.Fatal(err)
			}
			var commands []string
			for _, s := range x.Steps {
				if s.Kind == "command" {
					commands = append(commands, s.Text)
				}
			}
			if len(commands) != 1 || commands[0] != said {
				t.Fatalf("explain's commands %q, want [%q]", commands, said)
			}
		})
	}
	verifyOK(t, st)
}
