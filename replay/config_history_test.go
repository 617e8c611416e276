package replay_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// An upgrade does not re-apply an unchanged config: the first release
// stored incident-day's config in canonical format 1. Format 3 (issue 17)
// gave two new keys defaults that format 1 read as off, so the same file
// is now another config, applied once and recorded; stated with those keys
// at what format 1 meant (subscriptionBlockMaxMs 0, maxRetryDelayMs 0) it
// is found already in force and nothing is appended. Either way the ledger
// still verifies.
func TestHistory_UnchangedConfigIsNotReappliedAfterUpgrade(t *testing.T) {
	st := loadLedger(t, "first-release")
	ctx := context.Background()
	sc, err := scenario.LoadFile(filepath.Join("..", "fixtures", "scenarios", "incident-day.yaml"))
	testutil.NoError(t, err)
	const agent = "scn-incident-day-edce8949"
	filter, err := events.AggregateFilter(agent, events.AggConfig)
	testutil.NoError(t, err)
	evs, seq, err := st.ReadSubject(ctx, filter)
	testutil.NoError(t, err)
	if len(evs) == 0 {
		t.Fatalf("no ConfigApplied for %s in the fixture", agent)
	}
	stored := evs[len(evs)-1].Data.(events.ConfigApplied)
	if stored.Hash == sc.Loaded.Hash {
		t.Fatalf("the current format hashes like the first release's (%s): nothing to test", stored.Hash)
	}
	var tree map[string]any
	testutil.NoError(t, json.Unmarshal(sc.Loaded.Canonical, &tree))
	tree["auth"].(map[string]any)["cooldowns"].(map[string]any)["subscriptionBlockMaxMs"] = 0
	tree["retry"].(map[string]any)["provider"].(map[string]any)["maxRetryDelayMs"] = 0
	text, err := json.Marshal(tree)
	testutil.NoError(t, err)
	legacy, err := config.Parse(text, "incident-day with the format-1 meaning")
	testutil.NoError(t, err)
	got, applied, err := engine.ApplyConfig(ctx, st, agent, "scenario:incident-day", legacy, time.Now())
	testutil.NoError(t, err)
	if applied || got != seq {
		t.Fatalf("ApplyConfig appended (applied %v, seq %d; in force at %d): an unchanged config was re-applied", applied, got, seq)
	}
	got, applied, err = engine.ApplyConfig(ctx, st, agent, "scenario:incident-day", sc.Loaded, time.Now())
	testutil.NoError(t, err)
	if !applied || got <= seq {
		t.Fatalf("the file with the format-3 defaults was not applied (applied %v, seq %d)", applied, got)
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("%d divergent commits; first: %+v", rep.Diverged, rep.Divergences[0])
	}
}
