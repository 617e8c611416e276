package projections_test

import (
	"fmt"
	"testing"

	"github.com/fledger/fledger/projections"
)

// A cache bounded down to nothing (every clean row leaves after each
// flush, unfinished turns, sessions and profiles included, and comes back
// from the database) writes byte-identical rows to an unbounded one, at
// batch edges everywhere; the bound is real: the rows that left are read
// back (Result.ReadBack), none with the default bound on this stream.
func TestCacheBound_EvictedRowsReadBackGiveTheSameRows(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 2000)
	unbounded := openDB(t, "")
	catchUp(t, unbounded, st, 0, projections.WithCacheRows(1<<30))
	want := dump(t, unbounded)
	for _, tc := range []struct {
		rows, batch int
		readBack    int // the generated stream is deterministic
	}{
		{0, 1, 365},
		{0, 7, 198},
		{1, 3, 166},
		{2, 50, 46},
		{projections.DefaultCacheRows, projections.DefaultBatchEvents, 0},
	} {
		t.Run(fmt.Sprintf("rows=%d,batch=%d", tc.rows, tc.batch), func(t *testing.T) {
			db := openDB(t, "")
			res := catchUp(t, db, st, 0, projections.WithCacheRows(tc.rows), projections.WithBatchEvents(tc.batch))
			if got := dump(t, db); got != want {
				t.Fatalf("dump with %d cached rows differs from the unbounded cache's: %s", tc.rows, firstDiff(want, got))
			}
			if res.ReadBack != tc.readBack {
				t.Fatalf("%d rows read back, want %d", res.ReadBack, tc.readBack)
			}
		})
	}
}

// A crash in the middle of a batch of a catch-up whose cache is bounded
// to nothing resumes to the rows of a clean rebuild.
func TestCrash_BoundedCacheResumesExactly(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 600)
	if crashed := crashAndResume(t, st, 5, 37, projections.WithBatchEvents(20), projections.WithCacheRows(0)); crashed < 3 {
		t.Fatalf("only %d crash points", crashed)
	}
}
