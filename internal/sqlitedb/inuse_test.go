//go:build unix

package sqlitedb_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/sqlitedb"
	"github.com/fledger/fledger/internal/testutil"
)

func TestHelperHoldSQLite(t *testing.T) { testutil.HelperHoldSQLite() }

// InUse sees another process's open connection (a running serve's) and
// nothing else: not a missing file, not a closed database.
func TestInUse_SeesAnotherProcessesConnectionOnly(t *testing.T) {
	dir := t.TempDir()
	closed := filepath.Join(dir, "closed.sqlite")
	db, err := sqlitedb.Open(context.Background(), closed)
	testutil.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (x)`)
	testutil.NoError(t, err)
	testutil.NoError(t, db.Close())
	held := filepath.Join(dir, "held.sqlite")
	testutil.HoldSQLite(t, held)

	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(dir, "missing.sqlite"), false},
		{closed, false},
		{held, true},
	} {
		got, err := sqlitedb.InUse(c.path)
		testutil.NoError(t, err)
		if got != c.want {
			t.Errorf("InUse(%s) = %v, want %v", filepath.Base(c.path), got, c.want)
		}
	}
}

func TestHasHeader(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, content string
		want          bool
	}{
		{"empty", "", false},
		{"short", "SQLite format", false},
		{"text", "precious notes, not a database\n", false},
		{"header only", sqlitedb.Header, true},
		{"header and more", sqlitedb.Header + "\x10\x00", true},
	} {
		path := filepath.Join(dir, c.name)
		testutil.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
		got, err := sqlitedb.HasHeader(path)
		testutil.NoError(t, err)
		if got != c.want {
			t.Errorf("%s: HasHeader = %v, want %v", c.name, got, c.want)
		}
	}
}
