package projections_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// Several readers open the same new projection file at once and each
// catches it up (CLI readers sharing the default cache database): every
// one succeeds — one creates the schema, the others find it; catch-ups
// that find the checkpoint moved by another start again from it, or are
// done when it reached their target — and the database is the rebuild's.
func TestCatchUp_ReadersSharingAFreshDatabase(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	clean := rebuild(t, st)
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "shared.sqlite")
		if rebuilt := shareCatchUps(t, st, path, 4); rebuilt != 0 {
			t.Fatalf("round %d: %d readers report a rebuild of a new file", round, rebuilt)
		}
		if got := dumpFile(t, path); got != clean {
			t.Fatalf("round %d: the shared database differs from a rebuild", round)
		}
	}
}

// The same readers open a database of an older schema version at once
// (the first start of an upgraded fledger by several processes): the
// upgrade is one write transaction, so exactly one of them drops and
// recreates the tables — none finds a half-dropped schema or drops what
// another already caught up — and the database ends as a rebuild's.
func TestCatchUp_ReadersSharingAnOlderSchema(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 3000)
	clean := rebuild(t, st)
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "old.sqlite")
		db := openDB(t, path)
		catchUp(t, db, st, 0)
		testutil.NoError(t, db.Close())
		raw := openRawSQLite(t, path)
		_, err := raw.Exec(`UPDATE projection_meta SET value = '0' WHERE key = 'schema_version'`)
		testutil.NoError(t, err)
		testutil.NoError(t, raw.Close())

		if rebuilt := shareCatchUps(t, st, path, 4); rebuilt != 1 {
			t.Fatalf("round %d: %d readers rebuilt the older schema, want exactly 1", round, rebuilt)
		}
		if got := dumpFile(t, path); got != clean {
			t.Fatalf("round %d: the upgraded database differs from a rebuild", round)
		}
	}
}

// shareCatchUps starts readers goroutines that each open path (their own
// handle, as separate processes would) at the same moment and catch it up
// to the stream's end in small batches; it fails the test on any error
// and returns how many found an older schema and rebuilt it.
func shareCatchUps(t *testing.T, st events.Store, path string, readers int) (rebuilt int) {
	t.Helper()
	last, err := st.LastSeq(context.Background(), "")
	testutil.NoError(t, err)
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		n     atomic.Int32
	)
	errs := make([]error, readers)
	for i := range readers {
		wg.Go(func() {
			<-start
			db, err := projections.Open(context.Background(), path)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			if db.Rebuilt {
				n.Add(1)
			}
			res, err := projections.NewProjector(db, projections.WithBatchEvents(64)).CatchUp(context.Background(), st, last)
			if err == nil && res.To < last {
				t.Errorf("reader %d: caught up to %d, want %d", i, res.To, last)
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
	}
	return int(n.Load())
}

// dumpFile is the dump of the projection database at path.
func dumpFile(t *testing.T, path string) string {
	t.Helper()
	db, err := projections.Open(context.Background(), path)
	testutil.NoError(t, err)
	defer db.Close()
	return dump(t, db)
}
