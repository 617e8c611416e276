package projections_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/projections"
)

// Each iteration: a fresh database, a catch-up cancelled at a random
// moment, Close; then count the descriptors still open on those files.
func TestCatchUp_CancelledMidFlushLeavesNoConnection(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	dir := t.TempDir()
	start := time.Now()
	{
		d2, err := projections.Open(context.Background(), filepath.Join(dir, "full.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := projections.NewProjector(d2, projections.WithBatchEvents(8)).CatchUp(context.Background(), st, 0); err != nil {
			t.Fatal(err)
		}
		d2.Close()
	}
	full := time.Since(start)
	rng := rand.New(rand.NewPCG(1, 2))
	leaked := 0
	const runs = 10
	for i := 0; i < runs; i++ {
		name := fmt.Sprintf("c%d.sqlite", i)
		db, err := projections.Open(context.Background(), filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		tm := time.AfterFunc(time.Duration(rng.Int64N(int64(full))), cancel)
		_, cerr := projections.NewProjector(db, projections.WithBatchEvents(8)).CatchUp(ctx, st, 0)
		tm.Stop()
		cancel()
		_ = db.Close()
		if n := countFDs(t, "/"+name); n > 0 {
			leaked++
			t.Logf("iteration %d (%v): %d descriptor(s) of %s open after Close", i, cerr, n, name)
		}
	}
	if leaked > 0 {
		t.Fatalf("%d of %d databases still open after Close", leaked, runs)
	}
}
