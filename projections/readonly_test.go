package projections

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// OpenReadOnly creates nothing: a missing database is an error and stays
// missing; an existing one is read, and writing through it fails.
func TestOpenReadOnly_CreatesAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", DefaultFile)
	if _, err := OpenReadOnly(ctx, path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Fatalf("OpenReadOnly created %s", filepath.Dir(path))
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO turns (agent, turnId, sessionId, chat, requestedProvider, requestedModel,
		selectionSource, strict, configHash, answeredProvider, answeredModel, answeredProfileId, attempts, outcome, reason,
		disposition, startedAt, endedAt, durationMs, lastSeq, startSeq, openedAt, class) VALUES
		('b', 't1', 's', '', 'p', 'm', '', 0, '', '', '', '', 1, 'succeeded', '', '', 1000, 2000, 1000, 3, 1, 1000, 'first_try'),
		('a', 't1', 's', '', 'p', 'm', '', 0, '', '', '', '', 1, 'exhausted', '', '', 5000, 6000, 1000, 9, 7, 5000, 'exhausted'),
		('a', 'x%', 's2', '', 'p', 'm', '', 0, '', '', '', '', 1, 'unfinished', '', '', 3000, 0, 0, 5, 4, 3000, 'running')`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	agents, err := ro.Agents(ctx)
	if err != nil || len(agents) != 2 || agents[0] != "a" || agents[1] != "b" {
		t.Fatalf("Agents: %v %v", agents, err)
	}
	for _, c := range []struct {
		agent, prefix string
		n             int
		want          string
	}{
		{"", "", 10, "a/t1 a/x% b/t1"},
		{"", "", 2, "a/t1 a/x%"},
		{"b", "", 10, "b/t1"},
		{"", "x", 10, "a/x%"},
		{"", "%", 10, ""}, // a prefix matches literally, not as a pattern
	} {
		refs, err := ro.RecentTurns(ctx, c.agent, c.prefix, c.n)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for i, r := range refs {
			if i > 0 {
				got += " "
			}
			got += r.Agent + "/" + r.TurnID
		}
		if got != c.want {
			t.Errorf("RecentTurns(%q, %q, %d) = %q, want %q", c.agent, c.prefix, c.n, got, c.want)
		}
	}
	if _, err := ro.sql.ExecContext(ctx, `DELETE FROM turns`); err == nil {
		t.Fatal("a write through OpenReadOnly succeeded")
	}
}
