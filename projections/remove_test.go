//go:build unix

package projections_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/sqlitedb"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

func TestHelperHoldSQLite(t *testing.T) { testutil.HelperHoldSQLite() }

// Remove deletes only an empty file or a projection database nobody
// has open, and refuses anything else with an error naming the path and
// the remedy, leaving it as it was.
func TestRemove_DeletesOnlyAProjectionDatabaseNobodyUses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		testutil.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	sqliteWith := func(name, stmt string) string {
		p := filepath.Join(dir, name)
		db, err := sqlitedb.Open(ctx, p)
		testutil.NoError(t, err)
		if stmt != "" {
			_, err = db.Exec(stmt)
			testutil.NoError(t, err)
		}
		testutil.NoError(t, db.Close())
		return p
	}
	projectionDB := func(name string) string {
		p := filepath.Join(dir, name)
		db, err := projections.Open(ctx, p)
		testutil.NoError(t, err)
		testutil.NoError(t, db.Close())
		return p
	}
	emptyDir := filepath.Join(dir, "emptydir")
	testutil.NoError(t, os.Mkdir(emptyDir, 0o755))
	live := projectionDB("live.sqlite")
	testutil.HoldSQLite(t, live)
	damaged := file("damaged.sqlite", sqlitedb.Header+string(make([]byte, 4080)))

	for _, c := range []struct {
		name    string
		path    string
		removed bool
		err     error
		msg     string
	}{
		{name: "missing", path: filepath.Join(dir, "missing.sqlite")},
		{name: "empty file", path: file("empty.sqlite", ""), removed: true},
		{name: "projection database", path: projectionDB("p.sqlite"), removed: true},
		{name: "SQLite database without tables", path: sqliteWith("blank.sqlite", ""), removed: true},
		{name: "damaged SQLite database", path: damaged, removed: true},
		{name: "text file", path: file("p.txt", "precious\n"), err: projections.ErrNotProjectionDB,
			msg: "projections: not a fledger projection database, not deleted: " + dir + `/p.txt is not an SQLite database (it does not start with "SQLite format 3\x00"); name another file, or delete it yourself if it is a damaged projection database`},
		{name: "short file", path: file("short", "SQLite"), err: projections.ErrNotProjectionDB,
			msg: "projections: not a fledger projection database, not deleted: " + dir + `/short is not an SQLite database (it does not start with "SQLite format 3\x00"); name another file, or delete it yourself if it is a damaged projection database`},
		{name: "directory", path: emptyDir, err: projections.ErrNotProjectionDB,
			msg: "projections: not a fledger projection database, not deleted: " + emptyDir + " is a directory; name a database file, e.g. " + emptyDir + "/projections.sqlite"},
		{name: "another application's SQLite database", path: sqliteWith("notes.sqlite", `CREATE TABLE notes (body TEXT)`), err: projections.ErrNotProjectionDB,
			msg: "projections: not a fledger projection database, not deleted: " + dir + "/notes.sqlite is an SQLite database without fledger's projection_meta table; name another file"},
		{name: "another process's live database", path: live, err: projections.ErrInUse,
			msg: "projections: database in use by another process, not deleted: " + live + " is open in another process (a running `fledger serve` or `fledger view`?); stop that process first, or write the rebuild to another file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, statErr := os.Stat(c.path)
			removed, err := projections.Remove(ctx, c.path)
			if c.err == nil {
				testutil.NoError(t, err)
				if removed != c.removed {
					t.Fatalf("removed = %v, want %v", removed, c.removed)
				}
				for _, p := range []string{c.path, c.path + "-wal", c.path + "-shm"} {
					if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
						t.Fatalf("%s is still there (%v)", p, err)
					}
				}
				return
			}
			testutil.ErrorIs(t, err, c.err)
			if err.Error() != c.msg {
				t.Fatalf("message\n%q\nwant\n%q", err, c.msg)
			}
			after, err := os.Stat(c.path)
			testutil.NoError(t, statErr)
			testutil.NoError(t, err)
			if removed || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() || after.IsDir() != before.IsDir() {
				t.Fatalf("removed=%v; %s changed: %v %d → %v %d", removed, c.path, before.ModTime(), before.Size(), after.ModTime(), after.Size())
			}
		})
	}
}
