package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// Two begins of one turn id and session with different models, on two
// instances, their selections decided before either is appended: one
// begin is answered, the other refused (a mismatch, or contention while
// the winner has not started the turn) — and only the answered begin's
// selection is on the stream. Both selections were stored before, and
// the winning turn was then switched to the refused begin's model.
func TestBegin_RacingBeginsStoreOnlyTheWinnersSelection(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx := testutil.Context(t)
	models := [2]events.ModelRef{{Provider: "openai", Model: "gpt-5"}, {Provider: "anthropic", Model: "claude-opus-4-6"}}
	for round := range 6 {
		turn, session := fmt.Sprintf("t%d", round), fmt.Sprintf("s%d", round)
		hook := barrier(2)
		engine.SetBeforeAppend(a, func(s string) {
			if strings.Contains(s, ".session.") {
				hook(s)
			}
		})
		engine.SetBeforeAppend(b, func(s string) {
			if strings.Contains(s, ".session.") {
				hook(s)
			}
		})
		var wg sync.WaitGroup
		var steps [2]*engine.Step
		var errs [2]error
		for i, e := range []*engine.Engine{a, b} {
			wg.Go(func() {
				steps[i], errs[i] = e.BeginTurn(ctx, engine.TurnRequest{TurnID: turn, Session: session,
					Select: &engine.ModelSelection{Model: models[i]}})
			})
		}
		wg.Wait()
		engine.SetBeforeAppend(a, nil)
		engine.SetBeforeAppend(b, nil)
		won := -1
		for i := range 2 {
			switch {
			case errs[i] == nil && !steps[i].Replayed:
				if won >= 0 {
					t.Fatalf("round %d: both begins started the turn", round)
				}
				won = i
			case errors.Is(errs[i], engine.ErrBeginMismatch), errors.Is(errs[i], engine.ErrConflictRetries):
			default:
				t.Fatalf("round %d: begin %d: step %+v, err %v", round, i, steps[i], errs[i])
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no begin started the turn: %v, %v", round, errs[0], errs[1])
		}
		selected := storedSelections(t, st, session)
		if len(selected) != 1 || selected[0] != models[won].String() {
			t.Fatalf("round %d: selections stored %v, want only the answered begin's %s", round, selected, models[won])
		}
	}
}

// A begin of T2 whose selection marks a live switch on the session's
// running T1 carries T1's step id; when T1's outcome takes that step
// first, the selection is decided again on it (not taken for another
// begin of T2), and T2 starts (a reviewer found it refused after 2 s).
func TestBegin_SelectionMarkLosingItsStepIsDecidedAgain(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx := testutil.Context(t)
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	opus := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: "T1", Session: "s", Select: &engine.ModelSelection{Model: gpt}}); err != nil {
		t.Fatal(err)
	}
	testutil.NoError(t, b.Sync(ctx))
	var once sync.Once
	engine.SetBeforeAppend(b, func(s string) {
		if strings.Contains(s, ".session.") {
			once.Do(func() {
				if _, err := a.ReportOutcome(ctx, "T1", engine.AttemptReport{Attempt: 1, Err: overloaded()}); err != nil {
					t.Error(err)
				}
			})
		}
	})
	step, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "T2", Session: "s", Select: &engine.ModelSelection{Model: opus}})
	engine.SetBeforeAppend(b, nil)
	if err != nil || step.Replayed || step.Next.Call == nil || step.Next.Call.Provider != "anthropic" {
		t.Fatalf("begin of T2: %+v, %v; want a new call of anthropic", step, err)
	}
	selected := storedSelections(t, st, "s")
	if want := "[openai/gpt-5 anthropic/claude-opus-4-6]"; fmt.Sprint(selected) != want {
		t.Fatalf("selections %v, want %s", selected, want)
	}
	verifyOK(t, st)
}

// A begin of T with another model than the session's, on instance b,
// whose look-up did not see the begin of T that instance a stored
// meanwhile without a selection of its own (the session already held its
// model, so it claimed no selection id): b finds a's start on the server
// before storing its selection, and is answered begin_mismatch with
// nothing stored. (A start stored after that look still races: the
// documented limit.)
func TestBegin_LoserFindsAStartWithoutSelection(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx := testutil.Context(t)
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	opus := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	if _, err := a.SelectModel(ctx, "s", gpt, "user", nil, ""); err != nil {
		t.Fatal(err)
	}
	testutil.NoError(t, b.Sync(ctx))
	var once sync.Once
	engine.SetBeforeSelect(b, func(turn string) {
		once.Do(func() {
			if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: turn, Session: "s", Select: &engine.ModelSelection{Model: gpt}}); err != nil {
				t.Error(err)
			}
		})
	})
	_, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "T", Session: "s", Select: &engine.ModelSelection{Model: opus}})
	engine.SetBeforeSelect(b, nil)
	if !errors.Is(err, engine.ErrBeginMismatch) {
		t.Fatalf("the losing begin: %v, want begin_mismatch", err)
	}
	selected := storedSelections(t, st, "s")
	if fmt.Sprint(selected) != "[openai/gpt-5]" {
		t.Fatalf("selections %v: the refused begin's was stored", selected)
	}
}

// storedSelections lists the models the session's stored
// SessionModelSelected events select, in stream order.
func storedSelections(t *testing.T, st events.Store, session string) []string {
	t.Helper()
	evs, _, err := st.ReadSubject(testutil.Context(t), events.MustSubject("main", events.AggSession, session))
	testutil.NoError(t, err)
	var selected []string
	for _, ev := range evs {
		if p, ok := ev.Data.(events.SessionModelSelected); ok {
			selected = append(selected, p.Model.String())
		}
	}
	return selected
}
