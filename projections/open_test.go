package projections_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/sqlitedb"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// A damaged projection database names the rebuild command, which
// deletes it; a file that is not an SQLite database, or another
// application's, is not one: the error says fledger does not delete it,
// and Remove refuses it.
func TestOpen_CorruptFileIsAClearErrorWithTheRebuildCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	foreign := "; the event stream is not affected — this file is not a fledger projection database and fledger does not delete it: name another database file (--db), or delete it yourself if it is a damaged projection database"
	notes := filepath.Join(dir, "notes.sqlite")
	raw := openRawSQLite(t, notes)
	_, err := raw.Exec(`CREATE TABLE notes (body TEXT)`)
	testutil.NoError(t, err)
	testutil.NoError(t, raw.Close())
	// Another application's database in rollback-journal mode: the
	// read-write open would switch it to WAL.
	rollback := filepath.Join(dir, "rollback.sqlite")
	plain, err := sql.Open("sqlite", rollback)
	testutil.NoError(t, err)
	_, err = plain.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('precious')`)
	testutil.NoError(t, err)
	testutil.NoError(t, plain.Close())
	for _, c := range []struct {
		name, content string
		path          string
		msg           string
		removable     bool
	}{
		{name: "damaged.sqlite", content: sqlitedb.Header + strings.Repeat("\xff", 4080), removable: true,
			msg: "projections: database is corrupt or not a fledger projection database: " + dir + "/damaged.sqlite: file is not a database (26); the event stream is not affected — rebuild the projections with `fledger --data <data dir> stats --rebuild --db " + dir + "/damaged.sqlite` (or delete the file)"},
		{name: "p.txt", content: strings.Repeat("not a database ", 512),
			msg: "projections: database is corrupt or not a fledger projection database: " + dir + "/p.txt: file is not a database (26)" + foreign},
		{name: "notes.sqlite", path: notes,
			msg: "projections: database is corrupt or not a fledger projection database: " + dir + "/notes.sqlite: it has tables but no fledger schema version (SQL logic error: no such table: projection_meta (1))" + foreign},
		{name: "rollback.sqlite", path: rollback,
			msg: "projections: database is corrupt or not a fledger projection database: " + dir + "/rollback.sqlite: it is an SQLite database without fledger's projection_meta table" + foreign},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = filepath.Join(dir, c.name)
				testutil.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			}
			before, rerr := os.ReadFile(path)
			testutil.NoError(t, rerr)
			_, err := projections.Open(ctx, path)
			testutil.ErrorIs(t, err, projections.ErrCorrupt)
			if err.Error() != c.msg {
				t.Fatalf("message\n%q\nwant\n%q", err, c.msg)
			}
			if after, _ := os.ReadFile(path); !c.removable && string(after) != string(before) {
				t.Fatalf("the refused open changed %s", path)
			}
			_, err = projections.Remove(ctx, path)
			if !c.removable {
				testutil.ErrorIs(t, err, projections.ErrNotProjectionDB)
				return
			}
			testutil.NoError(t, err)
			db, err := projections.Open(ctx, path)
			testutil.NoError(t, err)
			testutil.NoError(t, db.Close())
		})
	}
}

func TestOpen_NewerSchemaIsRefused_OlderIsRebuiltWithALogLine(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 100)
	path := filepath.Join(t.TempDir(), "p.sqlite")
	db := openDB(t, path)
	catchUp(t, db, st, 0)
	clean := dump(t, db)

	_, err := db.SQL().Exec(`UPDATE projection_meta SET value = '99' WHERE key = 'schema_version'`)
	testutil.NoError(t, err)
	testutil.NoError(t, db.Close())
	_, err = projections.Open(context.Background(), path)
	testutil.ErrorIs(t, err, projections.ErrNewerSchema)
	if !strings.Contains(err.Error(), "schema version is 99") || !strings.Contains(err.Error(), "--rebuild") {
		t.Fatalf("message %q", err)
	}

	// An older version (simulated by writing 0 through a raw handle) is
	// rebuilt on open, with a log line, and catches up to the same dump.
	raw := openRawSQLite(t, path)
	_, err = raw.Exec(`UPDATE projection_meta SET value = '0' WHERE key = 'schema_version'`)
	testutil.NoError(t, err)
	testutil.NoError(t, raw.Close())
	var logs bytes.Buffer
	db3, err := projections.Open(context.Background(), path, projections.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	testutil.NoError(t, err)
	defer db3.Close()
	if !db3.Rebuilt || !strings.Contains(logs.String(), "rebuilding the projections") {
		t.Fatalf("rebuilt=%v log %q", db3.Rebuilt, logs.String())
	}
	if cp, _ := db3.Checkpoint(context.Background()); cp != 0 {
		t.Fatalf("checkpoint %d after the rebuild, want 0", cp)
	}
	catchUp(t, db3, st, 0)
	if got := dump(t, db3); got != clean {
		t.Fatalf("rebuilt dump differs: %s", firstDiff(clean, got))
	}
}

func openRawSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), path)
	testutil.NoError(t, err)
	return db
}

// A newer or foreign database is refused on a plain read, with its clear
// error, even while another process holds a write transaction on it (a
// newer fledger catching it up): only creating and rebuilding take the
// write lock.
func TestOpen_RefusedWithoutTheWriteLock(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      error
	}{
		{"newer", `UPDATE projection_meta SET value = '99' WHERE key = 'schema_version'`, projections.ErrNewerSchema},
		{"foreign", `DROP TABLE projection_meta`, projections.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.sqlite")
			testutil.NoError(t, openDB(t, path).Close())
			raw := openRawSQLite(t, path)
			defer raw.Close()
			_, err := raw.Exec(c.sql)
			testutil.NoError(t, err)
			tx, err := raw.Begin() // BEGIN IMMEDIATE: the write lock, held
			testutil.NoError(t, err)
			defer func() { _ = tx.Rollback() }()
			_, err = tx.Exec(`UPDATE checkpoint SET seq = seq WHERE id = 1`)
			testutil.NoError(t, err)

			_, err = projections.Open(context.Background(), path)
			testutil.ErrorIs(t, err, c.want)
		})
	}
}
