package projections_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// The turns rows of fixture live-switch-outside-chain: the turn a /model
// outside its chain handed back is switched (disposition live_switch, no
// answer, one attempt, ended when the failed call was decided), and the
// turn run again on the selection answered.
func TestExactRows_SwitchedTurn(t *testing.T) {
	sc, err := scenario.LoadFile("../fixtures/scenarios/live-switch-outside-chain.yaml")
	testutil.NoError(t, err)
	st, _ := openStore(t)
	_, err = scenario.Run(context.Background(), st, sc, scenario.Options{Agent: "main"})
	testutil.NoError(t, err)
	db := openDB(t, "")
	catchUp(t, db, st, 0)
	ms := func(d time.Duration) projections.UnixMillis {
		return projections.UnixMillis(sc.Start.Add(d).UnixMilli())
	}
	got, err := db.Turns(context.Background(), projections.TurnFilter{Session: "dm-jon"})
	testutil.NoError(t, err)
	for i := range got {
		got[i].ConfigHash, got[i].LastSeq = "", 0
	}
	want := []projections.Turn{
		{Agent: "main", TurnID: "warm-up", SessionID: "dm-jon", Chat: "direct", RequestedModel: "anthropic/claude-opus-4-6",
			SelectionSource: "default", AnsweredBy: "anthropic/claude-opus-4-6", AnsweredProfileID: "anthropic:work", Attempts: 1,
			Outcome: projections.OutcomeSucceeded, StartedAt: ms(0), EndedAt: ms(700 * time.Millisecond), DurationMs: 700},
		{Agent: "main", TurnID: "handed-back", SessionID: "dm-jon", Chat: "direct", RequestedModel: "anthropic/claude-opus-4-6",
			SelectionSource: "default", Attempts: 1, Outcome: projections.OutcomeSwitched, Disposition: projections.DispositionLiveSwitch,
			StartedAt: ms(5 * time.Minute), EndedAt: ms(5*time.Minute + 900*time.Millisecond), DurationMs: 900},
		{Agent: "main", TurnID: "handed-back-again", SessionID: "dm-jon", Chat: "direct", RequestedModel: "google-gemini/gemini-2.5-pro",
			SelectionSource: "user", Strict: true, AnsweredBy: "google-gemini/gemini-2.5-pro", AnsweredProfileID: "google-gemini:me", Attempts: 1,
			Outcome: projections.OutcomeSucceeded, StartedAt: ms(5*time.Minute + time.Second), EndedAt: ms(5*time.Minute + 1800*time.Millisecond), DurationMs: 800},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns\n got %+v\nwant %+v", got, want)
	}
	// The hand-back records the failed candidate (no next candidate,
	// final outcome switched) so exporters see the failure.
	decs, err := db.Decisions(context.Background(), projections.DecisionFilter{Session: "dm-jon"})
	testutil.NoError(t, err)
	var gotDecs []string
	for _, d := range decs {
		gotDecs = append(gotDecs, fmt.Sprintf("%s %s %s/%s %d/%d %s %d next=%s/%s step=%s→%s %s pos=%d | %s",
			d.TurnID, d.Decision, d.CandidateProvider, d.CandidateModel, d.Attempt, d.Total, d.Reason, d.Status,
			d.NextCandidateProvider, d.NextCandidateModel, d.FallbackStepFromModel, d.FallbackStepToModel,
			d.FallbackStepFinalOutcome, d.FallbackStepChainPosition, d.ConsoleMessage))
	}
	wantDecs := []string{
		"handed-back candidate_failed anthropic/claude-opus-4-6 1/2 overloaded 529 next=/ step=anthropic/claude-opus-4-6→ switched pos=1 | " +
			"model fallback candidate_failed: anthropic/claude-opus-4-6 (overloaded) -> switched",
	}
	if !reflect.DeepEqual(gotDecs, wantDecs) {
		t.Fatalf("fallback_decisions\n got %q\nwant %q", gotDecs, wantDecs)
	}
	switched, err := db.Turns(context.Background(), projections.TurnFilter{Outcome: projections.OutcomeSwitched})
	testutil.NoError(t, err)
	if len(switched) != 1 || switched[0].TurnID != "handed-back" {
		t.Fatalf("outcome switched: %+v", switched)
	}
}
