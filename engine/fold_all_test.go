package engine_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
)

// FoldAllTo folds every agent in one read of the stream: each agent's
// state — at its last commit, in the middle of the stream, at the
// stream's end, at sequence 0, keeping one or the default finished turns —
// is byte for byte what FoldTo gives for that agent alone.
func TestFoldAllTo_EqualsFoldToPerAgent(t *testing.T) {
	ctx := testutil.Context(t)
	st := testutil.Store(t, events.WithSyncAlways(false, 0))
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "scenarios", "*.yaml"))
	testutil.NoError(t, err)
	slices.Sort(files)
	files = files[:12]
	testutil.NoError(t, scenario.RunFiles(ctx, st, files))
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)

	targets := map[string]engine.FoldTarget{}
	for i, f := range files {
		agent := filepath.Base(f[:len(f)-len(".yaml")])
		own, err := st.LastSeq(ctx, events.AgentPrefix(agent)+">")
		testutil.NoError(t, err)
		seq := []uint64{own, last / 2, last, 0}[i%4]
		targets[agent] = engine.FoldTarget{Keep: []int{1, engine.DefaultFinishedTurns}[i%2], Seq: seq}
	}
	targets["no-such-agent"] = engine.FoldTarget{Keep: 1, Seq: last}

	all, err := engine.FoldAllTo(ctx, st, targets)
	testutil.NoError(t, err)
	if len(all) != len(targets) {
		t.Fatalf("%d folds for %d targets", len(all), len(targets))
	}
	for agent, tg := range targets {
		one, err := engine.FoldTo(ctx, st, agent, tg.Keep, tg.Seq)
		testutil.NoError(t, err)
		want, err := one.StateEncoding()
		testutil.NoError(t, err)
		got, err := all[agent].StateEncoding()
		testutil.NoError(t, err)
		if d := engine.SnapshotDiff(want, got); d != "" || string(want) != string(got) {
			t.Fatalf("agent %s to seq %d (keep %d): FoldAllTo differs from FoldTo: %s", agent, tg.Seq, tg.Keep, d)
		}
	}
	if _, err := engine.FoldAllTo(ctx, st, map[string]engine.FoldTarget{"x": {Seq: last + 1}}); err == nil {
		t.Fatal("a target past the stream's end folded")
	}
}
