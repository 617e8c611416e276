package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
)

// The growth of the incident-day scenario run 4 times: its exact turns,
// commits and model_fallback_decision records, and sizes that hold
// together (the file store holds at least the stream's stored bytes; a
// decision's event is part of a commit), and the engine snapshots' object
// store measured apart: one snapshot per run's agent.
func TestMeasureGrowth_IncidentDayCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fx, err := findFixtures("")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.LoadFile(filepath.Join(fx, "scenarios", "incident-day.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := measureGrowth(ctx, t.TempDir(), "incident-day", func(st events.Store) error {
		for range 4 {
			if _, err := scenario.Run(ctx, st, sc, scenario.Options{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.Turns != 20 || g.Commits != 84 || g.Decisions != 8 || g.Snapshots != 4 {
		t.Errorf("turns %d, commits %d, decisions %d, snapshots %d; want 20, 84, 8, 4", g.Turns, g.Commits, g.Decisions, g.Snapshots)
	}
	perCommit := g.StreamBytes / float64(g.Commits)
	if perCommit < 500 || g.DiskBytes < g.StreamBytes || g.DecisionBytes <= 0 || g.DecisionBytes > perCommit*3 || g.SnapshotBytes <= 0 {
		t.Errorf("stream %.0f B (%.0f per commit), disk %.0f B, decision %.0f B, snapshots %.0f B", g.StreamBytes, perCommit, g.DiskBytes, g.DecisionBytes, g.SnapshotBytes)
	}
	t.Logf("stream %.0f B/turn, disk %.0f B/turn, snapshot store %.0f B (%d snapshots)", g.perTurn(g.StreamBytes), g.perTurn(g.DiskBytes), g.SnapshotBytes, g.Snapshots)
}
