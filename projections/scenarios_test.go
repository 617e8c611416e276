package projections_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// TestScenarios_RebuildEqualsIncremental replays every scenario of
// fixtures/scenarios into a fresh store and checks that a rebuild from
// sequence 1, an incremental catch-up in several chunks, with a restart
// between chunks and tiny batches, and a rebuild whose cache keeps no row
// past a flush (every row read back when its key comes again) give
// byte-identical dumps.
func TestScenarios_RebuildEqualsIncremental(t *testing.T) {
	testutil.EachScenario(t, func(t *testing.T, f string) {
		sc, err := scenario.LoadFile(f)
		testutil.NoError(t, err)
		st, _ := openStore(t)
		if _, err := scenario.Run(context.Background(), st, sc, scenario.Options{Agent: "main"}); err != nil {
			t.Fatalf("scenario run: %v", err)
		}
		last, err := st.LastSeq(context.Background(), "")
		testutil.NoError(t, err)
		clean := rebuild(t, st)
		bounded := openDB(t, "")
		catchUp(t, bounded, st, 0, projections.WithCacheRows(0), projections.WithBatchEvents(2))
		if got := dump(t, bounded); got != clean {
			t.Fatalf("dump with the cache bounded to nothing differs from the rebuild: %s", firstDiff(clean, got))
		}

		path := filepath.Join(t.TempDir(), "inc.sqlite")
		for _, to := range []uint64{last / 4, last / 3, last / 2, last - 1, last} {
			db, err := projections.Open(context.Background(), path)
			testutil.NoError(t, err)
			_, err = projections.NewProjector(db, projections.WithBatchEvents(3)).CatchUp(context.Background(), st, to)
			testutil.NoError(t, err)
			testutil.NoError(t, db.Close())
		}
		db := openDB(t, path)
		if got := dump(t, db); got != clean {
			t.Fatalf("incremental dump differs from the rebuild: %s", firstDiff(clean, got))
		}
	})
}
