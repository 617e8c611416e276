package engine_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// Identical begins of one new turn id with a model (a gateway re-sending a
// begin whose answer it lost), four at once on two instances, their first
// appends held until two have decided: exactly one TurnStarted, exactly one
// selection (and, when another turn of the session runs, one live-switch
// mark on it), one answer recorded and three replayed with the same call,
// and replay --verify re-decides the ledger.
func TestRace_ResentBeginsWithAModel(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	for round, tc := range []struct {
		turn, session, running string // running: another turn of the session, begun first ("" = none)
	}{
		{"b0", "s0", ""},
		{"b1", "s1", "run1"},
		{"b2", "s2", ""},
		{"b3", "s3", "run3"},
	} {
		engine.SetBeforeAppend(a, nil)
		engine.SetBeforeAppend(b, nil)
		if tc.running != "" {
			if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: tc.running, Session: tc.session}); err != nil {
				t.Fatal(err)
			}
		}
		hook := barrier(2)
		engine.SetBeforeAppend(a, hook)
		engine.SetBeforeAppend(b, hook)
		steps, errs := make([]*engine.Step, 4), make([]error, 4)
		var wg sync.WaitGroup
		for i := range steps {
			e := []*engine.Engine{a, b}[(i+round)%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				steps[i], errs[i] = e.BeginTurn(ctx, engine.TurnRequest{TurnID: tc.turn, Session: tc.session,
					Select: &engine.ModelSelection{Model: gpt}})
			}()
		}
		wg.Wait()
		recorded, replayed := 0, 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d begin %d: %v", round, i, err)
			}
			if steps[i].Replayed {
				replayed++
			} else {
				recorded++
			}
			if c := steps[i].Next.Call; c == nil || c.Provider != "openai" || c.Model != "gpt-5" || c.Attempt != 1 {
				t.Fatalf("round %d begin %d: next %+v", round, i, steps[i].Next)
			}
		}
		if recorded != 1 || replayed != 3 {
			t.Fatalf("round %d: %d recorded, %d replayed; want 1 and 3", round, recorded, replayed)
		}
		want := map[string]int{"TurnStarted " + tc.turn: 1, "SessionModelSelected " + tc.session: 1}
		if tc.running != "" {
			want["LiveSwitchMarked "+tc.running] = 1
		}
		got := map[string]int{}
		for c := range commitsOf(t, st) {
			for _, ev := range c {
				switch p := ev.Data.(type) {
				case events.TurnStarted:
					if p.TurnID == tc.turn {
						got["TurnStarted "+p.TurnID]++
					}
				case events.SessionModelSelected:
					if p.Session == tc.session {
						got["SessionModelSelected "+p.Session]++
					}
				case events.LiveSwitchMarked:
					if p.Session == tc.session {
						got["LiveSwitchMarked "+p.TurnID]++
					}
				}
			}
		}
		if g, w := mustJSON(got), mustJSON(want); g != w {
			t.Fatalf("round %d: stream holds %s, want %s", round, g, w)
		}
	}
	engine.SetBeforeAppend(a, nil)
	engine.SetBeforeAppend(b, nil)
	verifyOK(t, st)
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A ledger written before a `/model` of the current selection became a
// no-op holds such repeats (a selection equal to the session's, and the
// live-switch mark it put on the running turn): replay --verify still
// re-decides them as recorded.
func TestVerify_RepeatedSelectionOfEarlierBuilds(t *testing.T) {
	st, a, _, _ := twoInstances(t)
	ctx := context.Background()
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	if _, err := a.SelectModel(ctx, "old", gpt, "user", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: "old1", Session: "old"}); err != nil {
		t.Fatal(err)
	}
	// What an earlier build appended for the repeat: the selection and the
	// mark, under the session.
	subj := events.MustSubject("main", events.AggSession, "old")
	last, err := st.LastSeq(ctx, subj)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	sel := events.New("main", "old", at, events.SessionModelSelected{Session: "old", Model: gpt, Source: "user"})
	mark := events.New("main", "old1", at, events.LiveSwitchMarked{TurnID: "old1", Session: "old", Model: gpt, Source: "user"}, events.WithCausation(sel.ID))
	if _, err := st.Append(ctx, subj, last, sel, mark); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The same selection now appends nothing.
	evs, err := a.SelectModel(ctx, "old", gpt, "user", nil, "")
	if err != nil || len(evs) != 0 {
		t.Fatalf("repeat now appended %v (%v)", evs, err)
	}
	verifyOK(t, st)
}
