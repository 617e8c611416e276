package projections_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/projections"
)

// A reader on the same *DB whose query is cancelled while a catch-up runs
// (an API client that goes away): the connection is discarded by
// database/sql; what happens to the catch-up's driver statements?
func TestCatchUp_CancelledReaderLeavesNoConnection(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	clean := rebuild(t, st)
	path := filepath.Join(t.TempDir(), "r.sqlite")
	db, err := projections.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var cancelled atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
			var n int64
			err := db.SQL().QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 100000000) SELECT count(*) FROM c`).Scan(&n)
			cancel()
			if err != nil {
				cancelled.Add(1)
			}
		}
	}()
	_, cerr := projections.NewProjector(db, projections.WithBatchEvents(8)).CatchUp(context.Background(), st, 0)
	stop.Store(true)
	<-done
	t.Logf("catch-up err %v; cancelled reads %d", cerr, cancelled.Load())
	if cerr == nil {
		if got := dump(t, db); got != clean {
			t.Fatalf("dump differs: %s", firstDiff(clean, got))
		}
	}
	_ = db.Close()
	if n := countFDs(t, "/r.sqlite"); n > 0 {
		t.Fatalf("%d descriptor(s) of r.sqlite open after Close", n)
	}
}
