package projections_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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
	// full duration
	start := time.Now()
	{
		d2 := openDB(t, filepath.Join(t.TempDir(), "x.sqlite"))
		if _, err := projections.NewProjector(d2, projections.WithBatchEvents(8)).CatchUp(context.Background(), st, 0); err != nil {
			t.Fatal(err)
		}
	}
	full := time.Since(start)
	t.Logf("full catch-up %v; fds on c.sqlite at start %d", full, countFDs(t, "/c.sqlite"))
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
	t.Logf("cancelled %d; fds on c.sqlite now %d", cancels, countFDs(t, "/c.sqlite"))
	if _, err := projections.NewProjector(db).CatchUp(context.Background(), st, 0); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, db); got != clean {
		t.Fatalf("dump differs: %s", firstDiff(clean, got))
	}
	t.Logf("fds on c.sqlite at end %d", countFDs(t, "/c.sqlite"))
}
