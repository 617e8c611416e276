package replay_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

// timelineRanges are the ranges both answers are compared on, derived
// from the agent's ledger span (first, last): the default (last hour of
// the ledger), the whole ledger, its last ten minutes, a minute in the
// middle, since only, until only (also at the epoch: since is clamped
// there), before the ledger, and a limit of 3.
func timelineRanges(agent string, first, last time.Time) []replay.RangeOptions {
	mid := first.Add(last.Sub(first) / 2)
	return []replay.RangeOptions{
		{Agent: agent},
		{Agent: agent, Since: first, Until: last},
		{Agent: agent, Since: last.Add(-10 * time.Minute), Until: last},
		{Agent: agent, Since: mid, Until: mid.Add(time.Minute)},
		{Agent: agent, Since: mid},
		{Agent: agent, Until: mid},
		{Agent: agent, Until: time.Unix(0, 0)}, // since clamped at the epoch
		{Agent: agent, Since: first.Add(-2 * time.Hour), Until: first.Add(-time.Hour)},
		{Agent: agent, Since: first, Until: last, Limit: 3},
		{Agent: "nobody"},
		{Agent: "nobody", Since: mid},
	}
}

// sameTimeline checks that the projections' timeline (DB.Timeline) is
// byte for byte the JSON of replay.ReadRange's, the reference that reads
// the whole stream, on every range of timelineRanges.
func sameTimeline(t *testing.T, src replay.Source, db *projections.DB, agent string) {
	t.Helper()
	ctx := context.Background()
	all, err := replay.ReadRange(ctx, src, replay.RangeOptions{Agent: agent})
	testutil.NoError(t, err)
	first, last := t0, t0.Add(time.Hour)
	if all.LedgerFirst != "" {
		first, err = time.Parse(time.RFC3339, all.LedgerFirst)
		testutil.NoError(t, err)
		last, err = time.Parse(time.RFC3339, all.LedgerLast)
		testutil.NoError(t, err)
	}
	for _, r := range timelineRanges(agent, first, last) {
		want, err := replay.ReadRange(ctx, src, r)
		testutil.NoError(t, err)
		got, err := db.Timeline(ctx, r)
		testutil.NoError(t, err)
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Fatalf("range %+v:\nprojection %s\n  ReadRange %s", r, gb, wb)
		}
	}
}

// project folds src into a new projection database in three catch-ups
// (reopened between them, tiny batches), so the windows and turns are
// also read back from the tables mid-way.
func project(t *testing.T, src projections.Source, last uint64) *projections.DB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.sqlite")
	for _, to := range []uint64{last / 3, last / 2, last} {
		db, err := projections.Open(ctx, path)
		testutil.NoError(t, err)
		if _, err := projections.NewProjector(db, projections.WithBatchEvents(3)).CatchUp(ctx, src, to); err != nil {
			t.Fatalf("catch up to %d: %v", to, err)
		}
		if to == last {
			t.Cleanup(func() { _ = db.Close() })
			return db
		}
		testutil.NoError(t, db.Close())
	}
	return nil
}

func TestTimeline_ProjectionEqualsReadRange_Scenarios(t *testing.T) {
	for _, name := range scenarioNames(t) {
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			runScenario(t, st, name, "main")
			last, err := st.LastSeq(context.Background(), "")
			testutil.NoError(t, err)
			sameTimeline(t, st, project(t, st, last), "main")
		})
	}
}

func TestTimeline_ProjectionEqualsReadRange_HandMade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream eventList
	}{
		{"profile windows", windowStream()},
		{"turns", turnStream()},
		{"both", append(windowStream(), turnStream()...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameTimeline(t, tc.stream, project(t, tc.stream, uint64(len(tc.stream))), "main")
		})
	}
}
