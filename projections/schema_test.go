package projections_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// v4Database creates at path a database with testdata/schema_v4.sql (the
// version 4 DDL as written before the tables were declared one a file)
// and its schema version row, as the build before that change left it.
func v4Database(t *testing.T, path string) {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema_v4.sql"))
	testutil.NoError(t, err)
	raw := openRawSQLite(t, path)
	defer raw.Close()
	_, err = raw.Exec(string(ddl) + `INSERT INTO projection_meta (key, value) VALUES ('schema_version', '4')`)
	testutil.NoError(t, err)
}

// masterRows is sqlite_master in creation order: every table and index
// with its root page and its SQL as SQLite keeps it.
func masterRows(t *testing.T, db *sql.DB) [][5]string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name, rootpage, coalesce(sql, '') FROM sqlite_master ORDER BY rowid`)
	testutil.NoError(t, err)
	defer rows.Close()
	var out [][5]string
	for rows.Next() {
		var r [5]string
		testutil.NoError(t, rows.Scan(&r[0], &r[1], &r[2], &r[3], &r[4]))
		out = append(out, r)
	}
	testutil.NoError(t, rows.Err())
	return out
}

func TestSchema_IsVersion5(t *testing.T) {
	if projections.SchemaVersion != 5 {
		t.Fatalf("SchemaVersion %d: a new version needs its own testdata/schema_v%d.sql and this test moved to it", projections.SchemaVersion, projections.SchemaVersion)
	}
	dir := t.TempDir()
	want := filepath.Join(dir, "v5.sqlite")
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema_v5.sql"))
	testutil.NoError(t, err)
	raw := openRawSQLite(t, want)
	defer raw.Close()
	_, err = raw.Exec(string(ddl) + `INSERT INTO projection_meta (key, value) VALUES ('schema_version', '5')`)
	testutil.NoError(t, err)
	gen := openDB(t, filepath.Join(dir, "generated.sqlite"))

	w, g := masterRows(t, raw), masterRows(t, gen.SQL())
	if len(w) != 17 {
		t.Fatalf("testdata/schema_v5.sql made %d sqlite_master rows, want 17 (10 tables, 7 indexes)", len(w))
	}
	for i := range max(len(w), len(g)) {
		var wr, gr [5]string
		if i < len(w) {
			wr = w[i]
		}
		if i < len(g) {
			gr = g[i]
		}
		if wr != gr {
			t.Errorf("sqlite_master row %d\n got %q\nwant %q", i+1, gr, wr)
		}
	}
}

// A version 4 database (no profile_windows, agent_spans, turns.startSeq
// or turns.class) is rebuilt when opened, never read half-filled: after
// the catch-up it dumps as a fresh rebuild.
func TestSchema_Version4DatabaseIsRebuiltAndCatchesUpTheSame(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 2000)
	want := rebuild(t, st)

	path := filepath.Join(t.TempDir(), "v4.sqlite")
	v4Database(t, path)
	var got string
	for i, to := range []uint64{g.lastSeq / 2, 0} { // reopened between the two
		db, err := projections.Open(context.Background(), path)
		testutil.NoError(t, err)
		if db.Rebuilt != (i == 0) {
			t.Fatalf("open %d: Rebuilt %v, want %v (a version 4 database is rebuilt once)", i+1, db.Rebuilt, i == 0)
		}
		if _, err := projections.NewProjector(db).CatchUp(context.Background(), st, to); err != nil {
			t.Fatalf("catch up to %d: %v", to, err)
		}
		got = dump(t, db)
		testutil.NoError(t, db.Close())
	}
	if got != want {
		t.Fatalf("dump differs from a rebuild: %s", firstDiff(want, got))
	}
}
