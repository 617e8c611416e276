package engine

import (
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// turnStarted returns the TurnStarted of res.
func turnStarted(t *testing.T, res *TurnResult) events.TurnStarted {
	t.Helper()
	for _, ev := range res.Events {
		if ts, ok := ev.Data.(events.TurnStarted); ok {
			return ts
		}
	}
	t.Fatal("no TurnStarted")
	return events.TurnStarted{}
}

// The engine starts every new turn under the current rule revision and
// records it in TurnStarted.Rules (issue 22: history re-decides by the
// revision it was recorded with).
func TestRules_NewTurnsRecordTheCurrentRevision(t *testing.T) {
	e := newEngine(t, testutil.Store(t), testutil.NewManualClock(testutil.T0))
	res, err := e.RunTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "s1"}, script{})
	testutil.NoError(t, err)
	if ts := turnStarted(t, res); ts.Rules != int(policy.CurrentRules) || policy.CurrentRules != policy.RulesV6 {
		t.Fatalf("TurnStarted.Rules %d, current %d", ts.Rules, policy.CurrentRules)
	}
}
