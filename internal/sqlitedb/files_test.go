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

func TestFormat(t *testing.T) {
	dir := t.TempDir()
	wal := filepath.Join(dir, "wal.sqlite")
	db, err := sqlitedb.Open(context.Background(), wal)
	testutil.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t (x)`)
	testutil.NoError(t, err)
	testutil.NoError(t, db.Close())
	rollback := filepath.Join(dir, "rollback.sqlite")
	plain, err := sql.Open("sqlite", rollback)
	testutil.NoError(t, err)
	_, err = plain.Exec(`CREATE TABLE t (x)`)
	testutil.NoError(t, err)
	testutil.NoError(t, plain.Close())
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
