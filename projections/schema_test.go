package projections_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// oldDatabase creates at path a database with testdata/schema_vN.sql
// (version N's DDL as that build wrote it; version 4's from before the
// tables were declared one a file) and its schema version row.
func oldDatabase(t *testing.T, path string, version int) {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("schema_v%d.sql", version)))
	testutil.NoError(t, err)
	raw := openRawSQLite(t, path)
	defer raw.Close()
	_, err = raw.Exec(string(ddl) + fmt.Sprintf(`INSERT INTO projection_meta (key, value) VALUES ('schema_version', '%d')`, version))
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

func TestSchema_IsVersion6(t *testing.T) {
	if projections.SchemaVersion != 6 {
		t.Fatalf("SchemaVersion %d: a new version needs its own testdata/schema_v%d.sql and this test moved to it", projections.SchemaVersion, projections.SchemaVersion)
	}
	dir := t.TempDir()
	want := filepath.Join(dir, "v6.sqlite")
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema_v6.sql"))
	testutil.NoError(t, err)
	raw := openRawSQLite(t, want)
	defer raw.Close()
	_, err = raw.Exec(string(ddl) + `INSERT INTO projection_meta (key, value) VALUES ('schema_version', '6')`)
	testutil.NoError(t, err)
	gen := openDB(t, filepath.Join(dir, "generated.sqlite"))

	w, g := masterRows(t, raw), masterRows(t, gen.SQL())
	if len(w) != 18 {
		t.Fatalf("testdata/schema_v6.sql made %d sqlite_master rows, want 18 (10 tables, 7 indexes, turns' key index)", len(w))
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

// A database of an older version is rebuilt when opened, never read
// half-filled or with its old layout: version 4 (no profile_windows,
// agent_spans, turns.startSeq or turns.class) and version 5 (turns
// WITHOUT ROWID). After the catch-up it dumps as a fresh rebuild.
func TestSchema_OlderDatabaseIsRebuiltAndCatchesUpTheSame(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 2000)
	want := rebuild(t, st)

	for _, version := range []int{4, 5} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.sqlite", version))
		oldDatabase(t, path, version)
		var got string
		for i, to := range []uint64{g.lastSeq / 2, 0} { // reopened between the two
			db, err := projections.Open(context.Background(), path)
			testutil.NoError(t, err)
			if db.Rebuilt != (i == 0) {
				t.Fatalf("version %d, open %d: Rebuilt %v, want %v (an older database is rebuilt once)", version, i+1, db.Rebuilt, i == 0)
			}
			if _, err := projections.NewProjector(db).CatchUp(context.Background(), st, to); err != nil {
				t.Fatalf("version %d: catch up to %d: %v", version, to, err)
			}
			got = dump(t, db)
			testutil.NoError(t, db.Close())
		}
		if got != want {
			t.Fatalf("version %d: dump differs from a rebuild: %s", version, firstDiff(want, got))
		}
	}
}
