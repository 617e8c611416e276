package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/sqlitedb"
	"github.com/fledger/fledger/projections"
)

// configLedger creates a ledger in a new data directory with one commit
// (config apply of the example config) and returns the directory.
func configLedger(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	applyExampleConfig(t, data)
	return data
}

// applyExampleConfig records the example config on the ledger of data
// (creating it when missing).
func applyExampleConfig(t *testing.T, data string) {
	t.Helper()
	if out, err := runFledger(t, "--data", data, "config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml")); err != nil {
		t.Fatalf("config apply: %v\n%s", err, out)
	}
}

// `replay --out PATH` and `stats --rebuild --db PATH` replace a
// projection database (or create one) and refuse, unchanged, anything
// else: a directory, a file that is not an SQLite database, another
// application's SQLite database. (Another process's live database:
// projections.TestRemove_DeletesOnlyAProjectionDatabaseNobodyUses.)
func TestRebuildTarget_RefusesWhatIsNotAProjectionDatabase(t *testing.T) {
	data := configLedger(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "p.txt")
	if err := os.WriteFile(text, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyDir := filepath.Join(dir, "emptydir")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.sqlite")
	db, err := sqlitedb.Open(context.Background(), notes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	prefix := "projections: not a fledger projection database, not deleted: "
	notSQLite := ` is not an SQLite database (it does not start with "SQLite format 3\x00"); name another file, or delete it yourself if it is a damaged projection database`
	for _, c := range []struct {
		name, path, msg string
	}{
		{"text file", text, prefix + text + notSQLite},
		{"directory", emptyDir, prefix + emptyDir + " is a directory; name a database file, e.g. " + emptyDir + "/projections.sqlite"},
		{"the data directory", data, prefix + data + " is a directory; name a database file, e.g. " + data + "/projections.sqlite"},
		{"another application's database", notes, prefix + notes + " is an SQLite database without fledger's projection_meta table; name another file"},
	} {
		for _, args := range [][]string{{"replay", "--out", c.path}, {"stats", "--rebuild", "--db", c.path}} {
			t.Run(c.name+"/"+args[0], func(t *testing.T) {
				before, _ := os.ReadFile(c.path)
				out, err := runFledger(t, append([]string{"--data", data}, args...)...)
				if !errors.Is(err, projections.ErrNotProjectionDB) || err.Error() != c.msg {
					t.Fatalf("error %v\nwant %s\n%s", err, c.msg, out)
				}
				fi, serr := os.Stat(c.path)
				after, _ := os.ReadFile(c.path)
				if serr != nil || string(after) != string(before) {
					t.Fatalf("%s changed: %v", c.path, serr)
				}
				if c.path == emptyDir && !fi.IsDir() {
					t.Fatalf("%s is no longer a directory", c.path)
				}
			})
		}
	}

	// What fledger wrote is replaced, an empty file taken, and the log
	// line says whether a database was deleted.
	empty := filepath.Join(dir, "empty.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"replay into an empty file", []string{"replay", "--out", empty}, "replayed 1 events (1 commits) up to seq 1"},
		{"replay over its own database", []string{"replay", "--out", empty}, "replayed 1 events (1 commits) up to seq 1"},
		{"rebuild of a missing database", []string{"stats", "--rebuild", "--db", filepath.Join(dir, "new.sqlite")}, "msg=\"no projection database yet: building it from the start of the stream\""},
		{"rebuild of an existing database", []string{"stats", "--rebuild", "--db", empty}, "msg=\"projection database deleted: rebuilding from the start of the stream\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runFledger(t, append([]string{"--data", data}, c.args...)...)
			if err != nil || !strings.Contains(out, c.want) {
				t.Fatalf("%v\n%s\nwant %q", err, out, c.want)
			}
		})
	}
}

// `replay --to-seq N` before the stream's first sequence (a stream
// continuing an archived one) is refused, as --until before the first
// commit is.
func TestReplay_ToSeqBeforeTheFirstSequenceIsRefused(t *testing.T) {
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := events.Open(ctx, events.WithDataDir(data), events.WithFirstSeq(1000))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	applyExampleConfig(t, data)
	out := filepath.Join(t.TempDir(), "r.sqlite")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "--out", out, "--to-seq", "500"}, "--to-seq 500 is before the first commit (the stream starts at sequence 1000)"},
		{[]string{"replay", "--verify", "--to-seq", "999"}, "--to-seq 999 is before the first commit (the stream starts at sequence 1000)"},
		{[]string{"replay", "--out", out, "--to-seq", "1000"}, ""},
	} {
		got, err := runFledger(t, append([]string{"--data", data}, c.args...)...)
		if c.want == "" {
			if err != nil || !strings.Contains(got, "replayed 1 events (1 commits) up to seq 1000") {
				t.Fatalf("%v: %v\n%s", c.args, err, got)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Fatalf("%v: error %v, want %q\n%s", c.args, err, c.want, got)
		}
	}
}
