package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

var (
	raceGPT  = events.ModelRef{Provider: "openai", Model: "gpt-5"}
	raceOpus = events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
)

// sessionTrail lists, in stream order, the session's selections and the
// turns started on it ("select openai/gpt-5", "start t1 openai/gpt-5").
func sessionTrail(t *testing.T, st events.Store, session string) []string {
	t.Helper()
	var out []string
	for c := range commitsOf(t, st) {
		for _, ev := range c {
			switch p := ev.Data.(type) {
			case events.SessionModelSelected:
				if p.Session == session {
					out = append(out, "select "+p.Model.String())
				}
			case events.TurnStarted:
				if p.Session == session {
					out = append(out, "start "+p.TurnID+" "+p.Requested.String())
				}
			}
		}
	}
	return out
}

// A selection of the session folded between a begin's selection and its
// start (forced by the after-select hook, once, on the other instance)
// makes the begin record its selection again: the turn starts on the
// begin's model, the identical re-send is answered Replayed (no
// begin_mismatch), and replay --verify re-decides the ledger.
func TestBegin_SelectionMovedBeforeStart(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, session string
		between       func(session string) error // on instance b, once
		want          []string
	}{
		{"a /model", "m1", func(s string) error {
			_, err := b.SelectModel(ctx, s, raceOpus, "user", nil, "")
			return err
		}, []string{"select openai/gpt-5", "select anthropic/claude-opus-4-6", "select openai/gpt-5", "start t-m1 openai/gpt-5"}},
		{"another begin with another model", "m2", func(s string) error {
			_, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "other-" + s, Session: s, Select: &engine.ModelSelection{Model: raceOpus}})
			return err
		}, []string{"select openai/gpt-5", "select anthropic/claude-opus-4-6", "start other-m2 anthropic/claude-opus-4-6",
			"select openai/gpt-5", "start t-m2 openai/gpt-5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var once sync.Once
			var hookErr error
			engine.SetAfterSelect(a, func(string) {
				once.Do(func() {
					if hookErr = tc.between(tc.session); hookErr == nil {
						hookErr = a.Sync(ctx)
					}
				})
			})
			defer engine.SetAfterSelect(a, nil)
			begin := engine.TurnRequest{TurnID: "t-" + tc.session, Session: tc.session, Select: &engine.ModelSelection{Model: raceGPT}}
			s, err := a.BeginTurn(ctx, begin)
			if err != nil || hookErr != nil {
				t.Fatalf("begin: %v (hook: %v)", err, hookErr)
			}
			if c := s.Next.Call; s.Replayed || c == nil || c.Provider != "openai" || c.Model != "gpt-5" {
				t.Fatalf("begin: replayed %v, next %+v; want a new call of openai/gpt-5", s.Replayed, s.Next)
			}
			if g, w := mustJSON(sessionTrail(t, st, tc.session)), mustJSON(tc.want); g != w {
				t.Fatalf("stream holds %s, want %s", g, w)
			}
			for _, e := range []*engine.Engine{a, b} {
				if err := e.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				r, err := e.BeginTurn(ctx, begin)
				if err != nil || !r.Replayed {
					t.Fatalf("re-send: %+v, %v; want Replayed", r, err)
				}
			}
		})
	}
	verifyOK(t, st)
}

// A selection that moves before every try gives up after the engine's
// conflict retries with an error that is both ErrConflictRetries (serve:
// 503 contention, which clients re-send) and ErrSelectionMoved, and
// starts nothing; the re-sent begin then starts the turn.
func TestRunTurn_SelectionMovedEveryTry(t *testing.T) {
	st, _, _, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := engine.New(ctx, st, "main", engine.WithConflictRetries(2), engine.WithSeeds(func(string) uint64 { return 7 }))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tries := 0
	engine.SetAfterSelect(e, func(string) {
		tries++
		if _, err := e.SelectModel(ctx, "mv", raceOpus, "user", nil, ""); err != nil {
			t.Error(err)
		}
	})
	ok := engine.CallerFunc(func(context.Context, engine.CallRequest) (engine.Answer, error) {
		return engine.Answer{Text: "ok"}, nil
	})
	req := engine.TurnRequest{TurnID: "t-mv", Session: "mv", Select: &engine.ModelSelection{Model: raceGPT}}
	_, err = e.RunTurn(ctx, req, ok)
	want := `engine: 3 append conflicts on fledger.main.session.mv: turn "t-mv" of session "mv": another selection replaced this begin's openai/gpt-5 before the turn could start on it (engine: the session's model selection changed before the turn started on it); send the begin again`
	if err == nil || err.Error() != want || !errors.Is(err, engine.ErrConflictRetries) || !errors.Is(err, engine.ErrSelectionMoved) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if _, ok, err := e.LookupTurn(ctx, "t-mv"); ok || err != nil || tries != 3 {
		t.Fatalf("turn stored %v (%v) after %d tries; want none after 3", ok, err, tries)
	}
	engine.SetAfterSelect(e, nil)
	res, err := e.RunTurn(ctx, req, ok)
	if err != nil || res.Attempts != 1 {
		t.Fatalf("re-sent: %+v, %v", res, err)
	}
	if g, w := fmt.Sprint(sessionTrail(t, st, "mv")[6:]), "[select openai/gpt-5 start t-mv openai/gpt-5]"; g != w {
		t.Fatalf("stream ends %s, want %s", g, w)
	}
	verifyOK(t, st)
}

// Begins with different models and different turn ids on one session,
// and `/model`s of it, at once on two instances (the first two begins
// held after their selection until both have selected, then synced, so
// one sees the other's): every turn starts on its own
// begin's model, every identical re-send is answered Replayed on either
// instance, and replay --verify re-decides the ledger.
func TestRace_BeginsWithOtherModelsOnOneSession(t *testing.T) {
	st, a, b, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	models := []events.ModelRef{raceGPT, raceOpus}
	for round := range 4 {
		session := fmt.Sprintf("rs%d", round)
		hold := barrier(2)
		for _, e := range []*engine.Engine{a, b} {
			engine.SetAfterSelect(e, func(string) {
				hold("")
				_ = e.Sync(ctx) // see the other's selection: the race's window
			})
		}
		reqs := make([]engine.TurnRequest, 4)
		errs := make([]error, len(reqs)+2)
		var wg sync.WaitGroup
		for i := range reqs {
			reqs[i] = engine.TurnRequest{TurnID: fmt.Sprintf("%s-t%d", session, i), Session: session,
				Select: &engine.ModelSelection{Model: models[(i+round)%2]}}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = []*engine.Engine{a, b}[i%2].BeginTurn(ctx, reqs[i])
			}()
		}
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[len(reqs)+j] = []*engine.Engine{b, a}[j].SelectModel(ctx, session, models[(j+round+1)%2], "user", nil, "")
			}()
		}
		wg.Wait()
		engine.SetAfterSelect(a, nil)
		engine.SetAfterSelect(b, nil)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d call %d: %v", round, i, err)
			}
		}
		started := map[string]events.ModelRef{}
		for c := range commitsOf(t, st) {
			for _, ev := range c {
				if p, ok := ev.Data.(events.TurnStarted); ok && p.Session == session {
					started[p.TurnID] = p.Requested
				}
			}
		}
		for i, r := range reqs {
			if got := started[r.TurnID]; got != r.Select.Model {
				t.Fatalf("round %d: turn %s started on %v, its begin asked %s", round, r.TurnID, got, r.Select.Model)
			}
			e := []*engine.Engine{b, a}[i%2]
			if err := e.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := e.BeginTurn(ctx, r)
			if err != nil || !s.Replayed {
				t.Fatalf("round %d: re-send of %s: %+v, %v; want Replayed", round, r.TurnID, s, err)
			}
		}
	}
	verifyOK(t, st)
}
