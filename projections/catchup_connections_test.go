package projections_test

// Catch-ups cancelled, closed or sharing their database handle with
// cancelled readers: the rows stay whole and resumable, and no SQLite
// connection (its file descriptors) outlives DB.Close — the flush's
// driver statements must not outlive the connection database/sql gives
// it.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/projections"
)

// countFDs counts this process's open descriptors whose path ends in
// sub (Linux's /proc; the test is skipped elsewhere): a SQLite connection
// left open after DB.Close keeps its file's.
func countFDs(t *testing.T, sub string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count open descriptors:", err)
	}
	n := 0
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasSuffix(l, sub) {
			n++
		}
	}
	return n
}

// Cancel catch-ups at random moments (many land mid-flush), resume, and
// compare with a rebuild; count the database file's open descriptors.
func TestCatchUp_CancelledMidFlushResumesToTheRebuild(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	clean := rebuild(t, st)
	path := filepath.Join(t.TempDir(), "c.sqlite")
	db := openDB(t, path)
	// The cancels land within the first eighth of a full catch-up's time.
	start := time.Now()
	{
		d2 := openDB(t, filepath.Join(t.TempDir(), "x.sqlite"))
		if _, err := projections.NewProjector(d2, projections.WithBatchEvents(8)).CatchUp(context.Background(), st, 0); err != nil {
			t.Fatal(err)
		}
	}
	full := time.Since(start)
	rng := rand.New(rand.NewPCG(1, 2))
	cancels := 0
	for i := 0; i < 12; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		d := time.Duration(rng.Int64N(int64(full)/8 + 1))
		tm := time.AfterFunc(d, cancel)
		_, err := projections.NewProjector(db, projections.WithBatchEvents(8)).CatchUp(ctx, st, 0)
		tm.Stop()
		cancel()
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Logf("iteration %d: %v", i, err)
			}
			cancels++
		}
	}
	t.Logf("%d of 12 catch-ups cancelled", cancels)
	if _, err := projections.NewProjector(db).CatchUp(context.Background(), st, 0); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, db); got != clean {
		t.Fatalf("dump differs: %s", firstDiff(clean, got))
	}
}

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
