package replay_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

func dumpFile(t testing.TB, path string) string {
	t.Helper()
	db, err := projections.Open(context.Background(), path)
	testutil.NoError(t, err)
	defer db.Close()
	var b bytes.Buffer
	testutil.NoError(t, db.Dump(context.Background(), &b))
	return b.String()
}

// TestRebuild_ToSeqEqualsAProjectorStoppedThere rebuilds at several
// points and compares each with an incremental projector that stopped at
// the same sequence.
func TestRebuild_ToSeqEqualsAProjectorStoppedThere(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	runScenario(t, st, "chain-overload", "demo2")
	last, err := st.LastSeq(context.Background(), "")
	testutil.NoError(t, err)
	dir := t.TempDir()
	inc, err := projections.Open(context.Background(), filepath.Join(dir, "inc.sqlite"))
	testutil.NoError(t, err)
	defer inc.Close()
	for _, to := range []uint64{1, last / 3, last / 2, last - 1, last} {
		_, err := projections.NewProjector(inc, projections.WithBatchEvents(5)).CatchUp(context.Background(), st, to)
		testutil.NoError(t, err)
		var want bytes.Buffer
		testutil.NoError(t, inc.Dump(context.Background(), &want))

		path := filepath.Join(dir, "replay.sqlite")
		res, err := replay.Rebuild(context.Background(), st, path, replay.RebuildOptions{ToSeq: to})
		testutil.NoError(t, err)
		if res.To != to {
			t.Fatalf("rebuild to %d reached %d", to, res.To)
		}
		if got := dumpFile(t, path); got != want.String() {
			t.Fatalf("rebuild to seq %d differs from the projector stopped there", to)
		}
	}
}

func TestSeqAt_StopsBeforeTheFirstLaterCommit(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	before, err := replay.SeqAt(context.Background(), st, start.Add(-time.Second))
	testutil.NoError(t, err)
	if before != 0 {
		t.Fatalf("SeqAt before the first commit = %d", before)
	}
	mid, err := replay.SeqAt(context.Background(), st, start.Add(2*time.Minute))
	testutil.NoError(t, err)
	end, err := replay.SeqAt(context.Background(), st, start.Add(time.Hour))
	testutil.NoError(t, err)
	last, _ := st.LastSeq(context.Background(), "")
	if mid == 0 || mid >= end || end != last {
		t.Fatalf("SeqAt mid %d end %d last %d", mid, end, last)
	}
	// The "recovered" turn (+1m) is in, "out-of-credit" (+5m) is not.
	path := filepath.Join(t.TempDir(), "at.sqlite")
	_, err = replay.Rebuild(context.Background(), st, path, replay.RebuildOptions{ToSeq: mid})
	testutil.NoError(t, err)
	db, err := projections.Open(context.Background(), path)
	testutil.NoError(t, err)
	defer db.Close()
	stats, err := db.UsageStats(context.Background(), projections.StatsFilter{Profile: "anthropic:work"})
	testutil.NoError(t, err)
	if len(stats) != 1 || stats[0].DisabledUntil != 0 {
		t.Fatalf("as of +2m anthropic:work must not be disabled yet: %+v", stats)
	}
}
