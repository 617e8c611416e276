package replay_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

func dumpReport(t testing.TB, rep *replay.VerifyReport) string {
	b, _ := json.MarshalIndent(rep, "", "  ")
	return string(b)
}

// TestVerify_EveryFixtureScenarioMatches runs every fixture scenario into
// one store (each under its own agent) and re-decides every recorded
// decision.
func TestVerify_EveryFixtureScenarioMatches(t *testing.T) {
	st := openStore(t)
	for _, name := range scenarioNames(t) {
		runScenario(t, st, name, "v-"+name)
	}
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("verify found divergences:\n%s", dumpReport(t, rep))
	}
	if rep.Checked[replay.DecisionStart] == 0 || rep.Checked[replay.DecisionOutcome] == 0 || rep.Checked[replay.DecisionResume] == 0 {
		t.Fatalf("verify checked too little: %v", rep.Checked)
	}
	if n := rep.Checked[replay.DecisionUnexplained]; n != 0 {
		t.Fatalf("%d unexplained commits", n)
	}
	t.Logf("checked %v over %d commits, %d turns; notes %s", rep.Checked, rep.Commits, rep.Turns, strings.Join(rep.Notes, "; "))
}
