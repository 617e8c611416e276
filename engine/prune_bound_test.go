package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
)

// With daily session maintenance the sessions an engine holds are those
// active within the age, however long the ledger: 60 days of 5 new
// sessions a day (one turn each), pruned every day with a 10-day age,
// hold the last 10 days' 50 sessions from day 10 on — and so do an
// engine folded from sequence 1 and one started from the snapshot.
func TestPruneSessions_HeldBoundedByAge(t *testing.T) {
	ctx := testutil.Context(t)
	st := testutil.Store(t, testutil.NoFsync)
	clock := testutil.NewManualClock(testutil.T0)
	e, err := engine.New(ctx, st, "main", engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 }))
	testutil.NoError(t, err)
	applyTwoProvider(t, e)
	ok := engine.CallerFunc(func(context.Context, engine.CallRequest) (engine.Answer, error) { return engine.Answer{}, nil })
	const perDay, days, age = 5, 60, 10
	for d := range days {
		for i := range perDay {
			id := fmt.Sprintf("d%02d-%d", d, i)
			if _, err := e.RunTurn(ctx, engine.TurnRequest{TurnID: "t-" + id, Session: "s-" + id}, ok); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(24 * time.Hour)
		rep, err := e.PruneSessions(ctx, engine.PruneOptions{After: age * 24 * time.Hour})
		testutil.NoError(t, err)
		want := min(d+1, age) * perDay
		if d >= age && len(rep.Pruned) != perDay {
			t.Fatalf("day %d: pruned %d sessions, want %d", d, len(rep.Pruned), perDay)
		}
		if h := e.Held(); h.Sessions != want {
			t.Fatalf("day %d: engine holds %d sessions, want %d", d, h.Sessions, want)
		}
	}
	held := e.Held()
	if held.Pruned != (days-age)*perDay {
		t.Fatalf("pruned in all %d, want %d", held.Pruned, (days-age)*perDay)
	}
	e.Close() // saves its snapshot
	for _, opts := range [][]engine.Option{{engine.WithSnapshotEvery(0)}, nil} {
		r, err := engine.New(ctx, st, "main", opts...)
		testutil.NoError(t, err)
		testutil.NoError(t, r.Sync(ctx))
		if h := r.Held(); h != held {
			t.Errorf("restarted (snapshot seq %d): holds %+v, the writer held %+v", r.StartedFrom(), h, held)
		}
		r.Close()
	}
}
