//go:build unix

package sqlitedb_test

import (
	"context"
	"database/sql"
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
	createTable(t, closed, true)
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

func TestFormat(t *testing.T) {
	dir := t.TempDir()
	wal := filepath.Join(dir, "wal.sqlite")
	createTable(t, wal, true)
	rollback := filepath.Join(dir, "rollback.sqlite")
	createTable(t, rollback, false)
	for _, c := range []struct {
		name, content, path string
		isSQLite, wal       bool
	}{
		{name: "empty", content: ""},
		{name: "short", content: "SQLite format"},
		{name: "text", content: "precious notes, not a database\n"},
		{name: "header only", content: sqlitedb.Header, isSQLite: true},
		{name: "WAL database", path: wal, isSQLite: true, wal: true},
		{name: "rollback-journal database", path: rollback, isSQLite: true},
	} {
		path := c.path
		if path == "" {
			path = filepath.Join(dir, c.name)
			testutil.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
		}
		isSQLite, isWAL, err := sqlitedb.Format(path)
		testutil.NoError(t, err)
		has, err := sqlitedb.HasHeader(path)
		testutil.NoError(t, err)
		if isSQLite != c.isSQLite || isWAL != c.wal || has != c.isSQLite {
			t.Errorf("%s: Format = %v, %v, HasHeader = %v; want %v, %v", c.name, isSQLite, isWAL, has, c.isSQLite, c.wal)
		}
	}
}

// createTable creates a database at path with one table, through
// sqlitedb.Open (WAL) or a plain connection (rollback journal), closed.
func createTable(t *testing.T, path string, wal bool) {
	t.Helper()
	var db *sql.DB
	var err error
	if wal {
		db, err = sqlitedb.Open(context.Background(), path)
	} else {
		db, err = sql.Open("sqlite", path)
	}
	testutil.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (x)`)
	testutil.NoError(t, err)
	testutil.NoError(t, db.Close())
}
