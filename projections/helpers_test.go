package projections_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// openStore is testutil.OpenStore with testutil.NoFsync (before opts):
// these tests need no power-loss durability.
func openStore(t testing.TB, opts ...events.Option) (events.Store, string) {
	t.Helper()
	return testutil.OpenStore(t, append([]events.Option{testutil.NoFsync}, opts...)...)
}

// openDB opens a projection database at path (a fresh temp file when "").
func openDB(t testing.TB, path string) *projections.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "p.sqlite")
	}
	db, err := projections.Open(context.Background(), path)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// catchUp runs one catch-up to seq to (0 = end).
func catchUp(t testing.TB, db *projections.DB, src projections.Source, to uint64, opts ...projections.ProjectorOption) projections.Result {
	t.Helper()
	res, err := projections.NewProjector(db, opts...).CatchUp(context.Background(), src, to)
	testutil.NoError(t, err)
	return res
}

func dump(t testing.TB, db *projections.DB) string {
	t.Helper()
	var b bytes.Buffer
	testutil.NoError(t, db.Dump(context.Background(), &b))
	return b.String()
}

// rebuild folds the whole stream into a fresh database and returns its
// dump.
func rebuild(t testing.TB, src projections.Source) string {
	t.Helper()
	db := openDB(t, "")
	catchUp(t, db, src, 0)
	return dump(t, db)
}

// firstDiff returns the first differing line of two dumps.
func firstDiff(a, b string) string {
	al, bl := bytes.Split([]byte(a), []byte("\n")), bytes.Split([]byte(b), []byte("\n"))
	for i := 0; i < len(al) && i < len(bl); i++ {
		if !bytes.Equal(al[i], bl[i]) {
			return "line " + string(rune('0'+i%10)) + ":\n  " + string(al[i]) + "\n  " + string(bl[i])
		}
	}
	return "lengths differ"
}
