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

// Close the database at a random moment of a catch-up.
func TestCatchUp_CloseDuringCatchUpLeavesNoConnection(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	leaked := 0
	const runs = 6
	for i := 0; i < runs; i++ {
		name := fmt.Sprintf("d%d.sqlite", i)
		db, err := projections.Open(context.Background(), filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		tm := time.AfterFunc(time.Duration(rng.Int64N(int64(300*time.Millisecond))), func() { _ = db.Close() })
		_, cerr := projections.NewProjector(db, projections.WithBatchEvents(8)).CatchUp(context.Background(), st, 0)
		time.Sleep(350 * time.Millisecond)
		tm.Stop()
		_ = db.Close()
		if n := countFDs(t, "/"+name); n > 0 {
			leaked++
			t.Logf("iteration %d (%v): %d descriptor(s) open after Close", i, cerr, n)
		}
	}
	if leaked > 0 {
		t.Fatalf("%d of %d databases still open after Close", leaked, runs)
	}
}
