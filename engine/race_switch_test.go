package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// A user `/model` on one instance racing the running turn's next step on
// another (both decided before either appends, four rounds): the mark takes
// the turn's step id, so whichever is stored second decides again on the
// first. Either the turn's decision saw the mark (every turn commit after
// the mark's was decided on a basis that holds it) or it came first and
// the mark went to the next step; in both orders the next call is the
// selected later candidate (kind live_switch), the mark is recorded once,
// and replay --verify re-decides the ledger.
func TestRace_LiveSwitchAndStep(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	for round, turn := range []string{"r1", "r2", "r3", "r4"} {
		session := "s-" + turn
		engine.SetBeforeAppend(a, nil)
		engine.SetBeforeAppend(b, nil)
		if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: turn, Session: session}); err != nil {
			t.Fatal(err)
		}
		hook := barrier(2)
		engine.SetBeforeAppend(a, hook)
		engine.SetBeforeAppend(b, hook)
		var wg sync.WaitGroup
		var stepErr, cmdErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			// Alternate which instance reports, so both sides of the
			// race run on either engine.
			e := a
			if round%2 == 1 {
				e = b
			}
			_, stepErr = e.ReportOutcome(ctx, turn, engine.AttemptReport{Attempt: 1, Err: overloaded()})
		}()
		go func() {
			defer wg.Done()
			e := b
			if round%2 == 1 {
				e = a
			}
			_, cmdErr = e.SelectModel(ctx, session, gpt, string(policy.SourceUser), nil, "")
		}()
		wg.Wait()
		engine.SetBeforeAppend(a, nil)
		engine.SetBeforeAppend(b, nil)
		if stepErr != nil || cmdErr != nil {
			t.Fatalf("round %d: step: %v, command: %v", round, stepErr, cmdErr)
		}
		step, err := a.CurrentStep(ctx, turn)
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
		if step.Next.Kind != policy.NextCall || c.Provider != "openai" || c.Model != "gpt-5" || c.Kind != policy.KindLiveSwitch || c.Attempt != 2 {
			t.Fatalf("round %d: next %+v %+v, want call openai/gpt-5 live_switch attempt 2", round, step.Next, c)
		}
		var mark uint64
		marks := 0
		for cm := range commitsOf(t, st) {
			for _, ev := range cm {
				if ev.Aggregate != events.AggTurn || ev.Key != turn {
					continue
				}
				if _, ok := ev.Data.(events.LiveSwitchMarked); ok {
					mark, marks = ev.Seq, marks+1
				} else if mark > 0 && ev.Basis < mark {
					t.Fatalf("round %d: %s at seq %d was decided on seq %d, before the live switch marked at %d", round, ev.Type, ev.Seq, ev.Basis, mark)
				}
			}
		}
		if marks != 1 {
			t.Fatalf("round %d: %d LiveSwitchMarked, want 1", round, marks)
		}
	}
	verifyOK(t, st)
}
