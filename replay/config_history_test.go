package replay_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/engine"
	"github.com/fledger/fledger/commands/scenario"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/replay"
)

// An upgrade does not re-apply an unchanged config: the first release
// stored incident-day's config in canonical format 1; this build hashes the
// same file differently (format 2) yet finds it already in force, appends
// nothing, and the ledger still verifies.
func TestHistory_UnchangedConfigIsNotReappliedAfterUpgrade(t *testing.T) {
	st := loadLedger(t, "first-release")
	ctx := context.Background()
	sc, err := scenario.LoadFile(filepath.Join("..", "fixtures", "scenarios", "incident-day.yaml"))
	require_NoError(t, err)
	const agent = "scn-incident-day-edce8949"
	filter, err := events.AggregateFilter(agent, events.AggConfig)
	require_NoError(t, err)
	evs, seq, err := st.ReadSubject(ctx, filter)
	require_NoError(t, err)
	if len(evs) == 0 {
		t.Fatalf("no ConfigApplied for %s in the fixture", agent)
	}
	stored := evs[len(evs)-1].Data.(events.ConfigApplied)
	if stored.Hash == sc.Loaded.Hash {
		t.Fatalf("the current format hashes like the first release's (%s): nothing to test", stored.Hash)
	}
	got, applied, err := engine.ApplyConfig(ctx, st, agent, "scenario:incident-day", sc.Loaded, time.Now())
	require_NoError(t, err)
	if applied || got != seq {
		t.Fatalf("ApplyConfig appended (applied %v, seq %d; in force at %d): an unchanged config was re-applied", applied, got, seq)
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	require_NoError(t, err)
	if !rep.OK() {
		t.Fatalf("%d divergent commits; first: %+v", rep.Diverged, rep.Divergences[0])
	}
}
