package projections_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

func require_NoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func require_ErrorIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// openStore opens a store on an embedded server in a fresh temp dir
// (fsync on an interval: tests need no power-loss durability).
func openStore(t testing.TB, opts ...events.Option) (events.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := events.Open(context.Background(), append([]events.Option{events.WithDataDir(dir), events.WithSyncAlways(false, time.Minute)}, opts...)...)
	require_NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

// openDB opens a projection database at path (a fresh temp file when "").
func openDB(t testing.TB, path string) *projections.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "p.sqlite")
	}
	db, err := projections.Open(context.Background(), path)
	require_NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// catchUp runs one catch-up to seq to (0 = end).
func catchUp(t testing.TB, db *projections.DB, src projections.Source, to uint64, opts ...projections.ProjectorOption) projections.Result {
	t.Helper()
	res, err := projections.NewProjector(db, opts...).CatchUp(context.Background(), src, to)
	require_NoError(t, err)
	return res
}

func dump(t testing.TB, db *projections.DB) string {
	t.Helper()
	var b bytes.Buffer
	require_NoError(t, db.Dump(context.Background(), &b))
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
