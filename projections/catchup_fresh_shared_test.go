package projections_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

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
	last, err := st.LastSeq(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	clean := rebuild(t, st)
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "shared.sqlite")
		const readers = 4
		var wg sync.WaitGroup
		errs := make([]error, readers)
		for i := range readers {
			wg.Go(func() {
				db, err := projections.Open(context.Background(), path)
				if err != nil {
					errs[i] = err
					return
				}
				defer db.Close()
				res, err := projections.NewProjector(db, projections.WithBatchEvents(64)).CatchUp(context.Background(), st, last)
				if err == nil && res.To < last {
					t.Errorf("round %d reader %d: caught up to %d, want %d", round, i, res.To, last)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d reader %d: %v", round, i, err)
			}
		}
		db, err := projections.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if got := dump(t, db); got != clean {
			t.Fatalf("round %d: the shared database differs from a rebuild", round)
		}
		db.Close()
	}
}
