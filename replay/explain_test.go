package replay_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

var update = flag.Bool("update", false, "rewrite the golden files under fixtures/golden")

// TestExplain_IncidentDayStormMatchesGolden explains the rate-limit storm
// of incident-day and compares it with fixtures/golden/explain-incident-day-storm.txt
// (go test ./replay -run Golden -update rewrites it). Turn ids, seeds,
// times and the config hash of a scenario are deterministic.
func TestExplain_IncidentDayStormMatchesGolden(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "golden")
	x, err := replay.Explain(context.Background(), st, "", "storm")
	testutil.NoError(t, err)
	var b bytes.Buffer
	testutil.NoError(t, replay.WriteExplanation(&b, x))
	path := filepath.Join("..", "fixtures", "golden", "explain-incident-day-storm.txt")
	if *update {
		testutil.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	testutil.NoError(t, err)
	if got := b.String(); got != string(want) {
		t.Fatalf("explain output differs from %s (rerun with -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
	if x.Outcome != "succeeded" || x.AnsweredBy != "openai/gpt-5" || len(x.Notices) != 1 {
		t.Fatalf("structured explanation: outcome %s answered by %s notices %v", x.Outcome, x.AnsweredBy, x.Notices)
	}
}

func TestExplain_UnknownAndAmbiguousTurns(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "a")
	runScenario(t, st, "incident-day", "b")
	if _, err := replay.Explain(context.Background(), st, "", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown turn: %v", err)
	}
	if _, err := replay.Explain(context.Background(), st, "", "storm"); !errors.Is(err, replay.ErrAmbiguousTurn) {
		t.Fatalf("ambiguous turn: %v", err)
	}
	x, err := replay.Explain(context.Background(), st, "b", "storm")
	testutil.NoError(t, err)
	if x.Agent != "b" {
		t.Fatalf("agent %s", x.Agent)
	}
}

func TestExplainTimeline_SessionTurnsAndCommands(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	tl, err := replay.ExplainTimeline(context.Background(), st, "demo", "dm-alice", time.Time{}, time.Time{})
	testutil.NoError(t, err)
	var turns, cmds int
	for _, e := range tl.Entries {
		switch e.Kind {
		case "turn":
			turns++
		case "command":
			cmds++
		}
	}
	if turns != 5 || cmds != 1 {
		t.Fatalf("timeline has %d turns and %d commands, want 5 and 1", turns, cmds)
	}
}
