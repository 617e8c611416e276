package projections_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

const pruneAfterMs = 30 * 24 * 3600 * 1000

// prunedLedger is a stream of session maintenance, with the sequence of
// its commits by name:
//
//   - select-gone, reset-gone, compact-gone: s-gone gets a /model, a
//     /reset and a compaction; select-kept, select-twice: /model of s-kept
//     and s-twice.
//   - 31 days later prune-gone, prune-twice, prune-never: SessionPruned of
//     s-gone, s-twice and s-never (which has no row: its only activity
//     was outside session_selection).
//   - back-gone: a /model google/gemini on s-gone, which comes back;
//     back-twice, prune-twice-again: s-twice comes back and is pruned
//     again; select-kept-again: a /model of s-kept.
func prunedLedger(t *testing.T) (events.Store, map[string]uint64) {
	t.Helper()
	st, _ := openStore(t)
	g := newGen(t, st)
	seqs := map[string]uint64{}
	do := func(name string, ps []events.Payload) {
		t.Helper()
		g.session(ps, nil)
		seqs[name] = g.lastSeq
		g.now += 1_000
	}
	sel := func(s string, r policy.ModelRef) []events.Payload {
		t.Helper()
		ps, err := policy.SelectModel(g.sessions[s], s, r, policy.SourceUser, nil)
		testutil.NoError(t, err)
		return ps
	}
	prune := func(s string) []events.Payload {
		t.Helper()
		ps := policy.PruneStale(s, t0, false, g.now, pruneAfterMs)
		if len(ps) != 1 {
			t.Fatalf("%s is not stale at %d: %v", s, g.now, ps)
		}
		return ps
	}
	do("select-gone", sel("s-gone", ref("openai", "gpt-5")))
	do("reset-gone", policy.ResetSession(g.sessions["s-gone"], "s-gone", "reset"))
	do("compact-gone", g.cfg.Params.CompleteCompaction(g.sessions["s-gone"], "s-gone"))
	do("select-kept", sel("s-kept", ref("openai", "gpt-5")))
	do("select-twice", sel("s-twice", ref("openai", "gpt-5")))
	g.now += pruneAfterMs + 24*3600*1000
	do("prune-gone", prune("s-gone"))
	do("prune-twice", prune("s-twice"))
	do("prune-never", prune("s-never"))
	do("back-gone", sel("s-gone", ref("google", "gemini")))
	do("back-twice", sel("s-twice", ref("google", "gemini")))
	do("prune-twice-again", prune("s-twice"))
	do("select-kept-again", sel("s-kept", ref("google", "gemini")))
	return st, seqs
}

// sessionsAt are the session_selection rows after the commit of
// prunedLedger named after: a pruned session has no row; one that came
// back has a new row holding only what came after its prune.
func sessionsAt(seqs map[string]uint64, after string) []projections.SessionSelection {
	row := func(s, provider, model, commit string) projections.SessionSelection {
		seq := seqs[commit]
		return projections.SessionSelection{Agent: agent, SessionKey: s, ProviderOverride: provider, ModelOverride: model,
			ModelOverrideSource: "user", UpdatedAt: projections.UnixMillis(updatedAt(seqs, commit)), LastSeq: seq}
	}
	gone := row("s-gone", "openai", "gpt-5", "compact-gone")
	gone.CompactionCount, gone.LastReset, gone.LastResetAt = 1, "reset", projections.UnixMillis(updatedAt(seqs, "reset-gone"))
	switch after {
	case "select-twice":
		return []projections.SessionSelection{gone, row("s-kept", "openai", "gpt-5", "select-kept"), row("s-twice", "openai", "gpt-5", "select-twice")}
	case "prune-gone":
		return []projections.SessionSelection{row("s-kept", "openai", "gpt-5", "select-kept"), row("s-twice", "openai", "gpt-5", "select-twice")}
	case "prune-never":
		return []projections.SessionSelection{row("s-kept", "openai", "gpt-5", "select-kept")}
	case "back-twice":
		return []projections.SessionSelection{row("s-gone", "google", "gemini", "back-gone"), row("s-kept", "openai", "gpt-5", "select-kept"),
			row("s-twice", "google", "gemini", "back-twice")}
	case "select-kept-again":
		return []projections.SessionSelection{row("s-gone", "google", "gemini", "back-gone"), row("s-kept", "google", "gemini", "select-kept-again")}
	}
	panic("no rows listed after " + after)
}

// updatedAt is the envelope time of a prunedLedger commit: each is a
// second after the one before, with 31 days before prune-gone.
func updatedAt(seqs map[string]uint64, commit string) int64 {
	at := t0 + int64(seqs[commit]-seqs["select-gone"])*1_000
	if seqs[commit] >= seqs["prune-gone"] {
		at += pruneAfterMs + 24*3600*1000
	}
	return at
}

func sessions(t *testing.T, db *projections.DB) []projections.SessionSelection {
	t.Helper()
	got, err := db.Sessions(context.Background(), projections.SessionFilter{})
	testutil.NoError(t, err)
	return got
}

// checkSessions fails unless db's session_selection rows are want (after
// the point of the stream named when).
func checkSessions(t *testing.T, db *projections.DB, want []projections.SessionSelection, when string) {
	t.Helper()
	if got := sessions(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("after %s: session_selection\n got %+v\nwant %+v", when, got, want)
	}
}

// batchShape is a projector's batch size and cache bound.
type batchShape struct{ batch, rows int }

func (s batchShape) String() string { return fmt.Sprintf("batch=%d,rows=%d", s.batch, s.rows) }

func (s batchShape) opts() []projections.ProjectorOption {
	return []projections.ProjectorOption{projections.WithBatchEvents(s.batch), projections.WithCacheRows(s.rows)}
}

// pruneShapes put a prune in the batch of its session's other events (one
// batch), or in a later batch with the rows cached or left (batch 1, 2
// or 3, no row cached past a batch).
var pruneShapes = []batchShape{
	{projections.DefaultBatchEvents, projections.DefaultCacheRows},
	{projections.DefaultBatchEvents, 0},
	{1, projections.DefaultCacheRows},
	{1, 0},
	{2, 0},
	{3, 1},
}

// crashShapes are the batch shapes a crash is injected at every row of.
var crashShapes = []batchShape{{2, 0}, {5, projections.DefaultCacheRows}}

// A SessionPruned deletes the session's row, whatever the batches and the
// cache bound: in the batch of the session's other events (one batch),
// in a later batch with the row cached or left (batch 1, 2 or 3, no row
// cached past a batch), and a session that comes back in the prune's
// batch or a later one has a new row. Every run writes the rebuild's
// dump.
func TestSessionPruned_DeletesTheRowInEveryBatchShape(t *testing.T) {
	st, seqs := prunedLedger(t)
	want := sessionsAt(seqs, "select-kept-again")
	clean := rebuild(t, st)
	for _, tc := range pruneShapes {
		t.Run(tc.String(), func(t *testing.T) {
			db := openDB(t, "")
			catchUp(t, db, st, 0, tc.opts()...)
			checkSessions(t, db, want, "the end")
			if got := dump(t, db); got != clean {
				t.Fatalf("dump differs from the rebuild's: %s", firstDiff(clean, got))
			}
		})
	}
}

// Catch-ups of one commit each, the database closed and reopened between
// them (a restart), list the rows of each point of the stream and end
// with the rebuild's dump. The prune reads nothing back (the row is
// deleted unread), nor does the pruned session's return (its row is
// gone), while s-kept's next /model reads its row back.
func TestSessionPruned_IncrementalCatchUpsWithRestarts(t *testing.T) {
	st, seqs := prunedLedger(t)
	clean := rebuild(t, st)
	path := filepath.Join(t.TempDir(), "inc.sqlite")
	readBack := map[string]int{"prune-gone": 0, "prune-never": 0, "back-gone": 0, "prune-twice-again": 0, "select-kept-again": 1}
	for _, name := range []string{"select-twice", "prune-gone", "prune-twice", "prune-never", "back-gone", "back-twice", "prune-twice-again", "select-kept-again"} {
		db, err := projections.Open(context.Background(), path)
		testutil.NoError(t, err)
		res, err := projections.NewProjector(db).CatchUp(context.Background(), st, seqs[name])
		testutil.NoError(t, err)
		if n, ok := readBack[name]; ok && res.ReadBack != n {
			t.Errorf("catch-up through %s read back %d rows, want %d", name, res.ReadBack, n)
		}
		if want := sessionsAtOrNil(seqs, name); want != nil {
			checkSessions(t, db, want, name)
		}
		testutil.NoError(t, db.Close())
	}
	db := openDB(t, path)
	if got := dump(t, db); got != clean {
		t.Fatalf("incremental dump differs from the rebuild: %s", firstDiff(clean, got))
	}
}

// sessionsAtOrNil is sessionsAt for the points it lists, else nil.
func sessionsAtOrNil(seqs map[string]uint64, after string) []projections.SessionSelection {
	switch after {
	case "select-twice", "prune-gone", "prune-never", "back-twice", "select-kept-again":
		return sessionsAt(seqs, after)
	}
	return nil
}

// A crash at any row of any batch, the delete of a pruned row included,
// resumes to the rebuild's rows.
func TestSessionPruned_CrashResumesExactly(t *testing.T) {
	st, _ := prunedLedger(t)
	for _, tc := range crashShapes {
		t.Run(tc.String(), func(t *testing.T) {
			if crashed := crashAndResume(t, st, 1, 1, tc.opts()...); crashed < 8 {
				t.Fatalf("only %d crash points", crashed)
			}
		})
	}
}
