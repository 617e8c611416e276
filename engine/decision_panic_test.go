package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A decider that panics on an impossible turn state (a forged commit: an
// attempt at candidate 99 of a three-model chain) fails that step with
// ErrDecisionPanicked and nothing appended; the engine goes on serving
// every other turn, its fold and its session commands. The panic used to
// leave the state's read lock and the profile's lock held, so every later
// step and the fold behind it waited for ever.
func TestStep_DecisionPanicFailsOneStepOnly(t *testing.T) {
	st, e, ctx := manualEngine(t)
	if _, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	// t1's own start, made into turn "forged" with an impossible attempt.
	evs, _, err := st.ReadSubject(ctx, events.MustSubject("main", events.AggTurn, "t1"))
	testutil.NoError(t, err)
	var forged []events.Event
	for _, ev := range evs {
		switch p := ev.Data.(type) {
		case events.TurnStarted:
			p.TurnID = "forged"
			forged = append(forged, events.New("main", "forged", testutil.T0, p, events.WithCorrelation("forged")))
		case events.AttemptStarted:
			p.TurnID, p.CandidateIndex = "forged", 99
			forged = append(forged, events.New("main", "forged", testutil.T0, p, events.WithCorrelation("forged")))
		}
	}
	if len(forged) != 2 {
		t.Fatalf("t1's start holds %d events", len(forged))
	}
	before, err := st.AppendCommit(ctx, events.AppendRequest{Subject: events.MustSubject("main", events.AggTurn, "forged"), Expected: events.AnySeq, Events: forged})
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))

	failure := &classify.ProviderError{Status: 401, Message: "invalid x-api-key"}
	for range 2 {
		_, err = e.ReportOutcome(ctx, "forged", AttemptReport{Attempt: 1, Err: failure})
		if !errors.Is(err, ErrDecisionPanicked) {
			t.Fatalf("outcome of the forged turn: %v, want ErrDecisionPanicked", err)
		}
	}
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	if last != before.Seq {
		t.Fatalf("the panicked steps appended through seq %d (the forged commit is %d)", last, before.Seq)
	}

	// Everything else goes on, each within a bound.
	bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := e.ReportOutcome(bounded, "t1", AttemptReport{Attempt: 1, Err: failure}); err != nil {
		t.Fatalf("outcome of t1 after the panic: %v", err)
	}
	if _, err := e.BeginTurn(bounded, TurnRequest{TurnID: "t2", Session: "s2"}); err != nil {
		t.Fatalf("begin after the panic: %v", err)
	}
	if _, err := e.CompleteCompaction(bounded, "s3"); err != nil {
		t.Fatalf("session command after the panic: %v", err)
	}
	testutil.NoError(t, e.Sync(bounded))
}
