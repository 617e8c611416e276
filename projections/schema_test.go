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

func TestSchema_IsVersion4(t *testing.T) {
	if projections.SchemaVersion != 4 {
		t.Fatalf("SchemaVersion %d: a new version needs its own testdata/schema_v%d.sql and this test moved to it", projections.SchemaVersion, projections.SchemaVersion)
	}
	dir := t.TempDir()
	want := filepath.Join(dir, "v4.sqlite")
	v4Database(t, want)
	gen := openDB(t, filepath.Join(dir, "generated.sqlite"))

	raw := openRawSQLite(t, want)
	defer raw.Close()
	w, g := masterRows(t, raw), masterRows(t, gen.SQL())
	if len(w) != 13 {
		t.Fatalf("testdata/schema_v4.sql made %d sqlite_master rows, want 13 (8 tables, 5 indexes)", len(w))
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

func TestSchema_DatabaseOfTheVersion4DDLOpensAndCatchesUpTheSame(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 2000)
	want := rebuild(t, st)

	path := filepath.Join(t.TempDir(), "v4.sqlite")
	v4Database(t, path)
	var got string
	for _, to := range []uint64{g.lastSeq / 2, 0} { // reopened between the two
		db, err := projections.Open(context.Background(), path)
		testutil.NoError(t, err)
		if db.Rebuilt {
			t.Fatalf("a version 4 database was rebuilt")
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
