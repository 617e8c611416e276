package projections_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// TestCatchUp_ReaderSeesOnlyCommittedBatches reads the database from a
// second handle while a catch-up writes it in many small batches: every
// read sees whole batches (no row folded after the checkpoint it reads),
// the checkpoint never goes back, and the result is the rebuild's.
func TestCatchUp_ReaderSeesOnlyCommittedBatches(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 2000)
	clean := rebuild(t, st)

	path := filepath.Join(t.TempDir(), "p.sqlite")
	db := openDB(t, path)
	reader := openDB(t, path)
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	var readErr error
	wg.Go(func() {
		var last int64
		for {
			select {
			case <-done:
				return
			default:
			}
			// One statement reads one snapshot of the database.
			var cp, turnSeq, decisionSeq int64
			err := reader.SQL().QueryRowContext(ctx, `SELECT (SELECT seq FROM checkpoint WHERE id = 1),
				(SELECT coalesce(max(lastSeq), 0) FROM turns), (SELECT coalesce(max(seq), 0) FROM fallback_decisions)`).
				Scan(&cp, &turnSeq, &decisionSeq)
			switch {
			case err != nil:
				readErr = err
				return
			case cp < last || turnSeq > cp || decisionSeq > cp:
				readErr = fmt.Errorf("a read saw checkpoint %d after %d, turns.lastSeq up to %d, fallback_decisions.seq up to %d",
					cp, last, turnSeq, decisionSeq)
				return
			}
			last = cp
			reads++
		}
	})
	res, err := projections.NewProjector(db, projections.WithBatchEvents(64)).CatchUp(ctx, st, 0)
	close(done)
	wg.Wait()
	testutil.NoError(t, err)
	testutil.NoError(t, readErr)
	if res.To != g.lastSeq || res.Batches < 10 || reads == 0 {
		t.Fatalf("catch-up to %d in %d batches with %d reads; want %d, ≥ 10 batches, ≥ 1 read", res.To, res.Batches, reads, g.lastSeq)
	}
	if got := dump(t, db); got != clean {
		t.Fatalf("dump differs from the rebuild: %s", firstDiff(clean, got))
	}
}
