package projections_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// A database built from ledger A and then caught up against ledger B (two
// stores in two data directories) is refused with an error naming both
// ledgers; nothing is written to the database or to either stream. A
// rebuild (delete, then catch up) gives exactly B's projections.
func TestBind_DatabaseOfAnotherLedgerIsRefusedNotMixed(t *testing.T) {
	ctx := context.Background()
	stA, _ := openStore(t)
	stB, _ := openStore(t)
	generate(t, stA, 300)
	generate(t, stB, 500)
	ledgerA, err := stA.Ledger(ctx)
	testutil.NoError(t, err)
	ledgerB, err := stB.Ledger(ctx)
	testutil.NoError(t, err)
	if ledgerA.Same(ledgerB) || ledgerA.FirstID == "" || ledgerA.Created.IsZero() || ledgerA.Stream != events.StreamName {
		t.Fatalf("ledgers A %+v and B %+v", ledgerA, ledgerB)
	}
	lastA, lastB := ledgerA.LastSeq, ledgerB.LastSeq

	path := filepath.Join(t.TempDir(), "p.sqlite")
	db := openDB(t, path)
	catchUp(t, db, stA, 0)
	bound, ok, err := db.Ledger(ctx)
	testutil.NoError(t, err)
	if !ok || !bound.Same(ledgerA) || bound.FirstID != ledgerA.FirstID {
		t.Fatalf("database bound to %+v (ok %v), want %+v", bound, ok, ledgerA)
	}
	before := dump(t, db)
	cpBefore, _ := db.Checkpoint(ctx)

	// Through CatchUp (a new Projector, as a new process would run it).
	_, err = projections.NewProjector(db).CatchUp(ctx, stB, 0)
	testutil.ErrorIs(t, err, projections.ErrOtherLedger)
	var de *projections.DBError
	if !errors.As(err, &de) || de.Path != path {
		t.Fatalf("error %v is not a *DBError naming %s", err, path)
	}
	msg := err.Error()
	for _, want := range []string{ledgerA.Created.UTC().Format(time.RFC3339Nano), ledgerB.Created.UTC().Format(time.RFC3339Nano),
		ledgerA.FirstID, "another ledger", "stats --rebuild", "stream is not affected"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	// Through Bind directly (what the CLI does before its shortcut).
	testutil.ErrorIs(t, db.Bind(ctx, ledgerB), projections.ErrOtherLedger)

	if got := dump(t, db); got != before {
		t.Fatalf("the refused catch-up changed the database: %s", firstDiff(before, got))
	}
	if cp, _ := db.Checkpoint(ctx); cp != cpBefore {
		t.Fatalf("checkpoint %d, want %d", cp, cpBefore)
	}
	if still, _, _ := db.Ledger(ctx); !still.Same(ledgerA) {
		t.Fatalf("fingerprint changed to %+v", still)
	}
	for st, want := range map[events.Store]uint64{stA: lastA, stB: lastB} {
		if got, err := st.LastSeq(ctx, ""); err != nil || got != want {
			t.Fatalf("stream last seq %d (%v), want %d", got, err, want)
		}
	}

	// The rebuild: delete and catch up from B (what --rebuild does).
	testutil.NoError(t, db.Close())
	_, err = projections.Remove(ctx, path)
	testutil.NoError(t, err)
	db2 := openDB(t, path)
	catchUp(t, db2, stB, 0)
	if got, want := dump(t, db2), rebuild(t, stB); got != want {
		t.Fatalf("rebuilt database differs from B's projections: %s", firstDiff(want, got))
	}
	if l, _, _ := db2.Ledger(ctx); !l.Same(ledgerB) {
		t.Fatalf("rebuilt database bound to %+v, want %+v", l, ledgerB)
	}
}

// A checkpoint beyond the stream's last sequence is refused (before the
// CLI's "already caught up" shortcut could hide it).
func TestBind_CheckpointBeyondTheStreamIsRefused(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	generate(t, st, 100)
	db := openDB(t, "")
	catchUp(t, db, st, 0)
	l, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	_, err = db.SQL().Exec(`UPDATE checkpoint SET seq = ? WHERE id = 1`, int64(l.LastSeq+50))
	testutil.NoError(t, err)

	err = db.Bind(ctx, l)
	testutil.ErrorIs(t, err, projections.ErrOtherLedger)
	if want := "checkpoint " + strconv.FormatUint(l.LastSeq+50, 10) + " is beyond the stream's last sequence " + strconv.FormatUint(l.LastSeq, 10); !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	_, err = projections.NewProjector(db).CatchUp(ctx, st, 0)
	testutil.ErrorIs(t, err, projections.ErrOtherLedger)
}

// The same ledger reopened — the database closed and reopened, the
// embedded server restarted on its data directory — keeps its
// fingerprint, and catch-up stays incremental.
func TestBind_SameLedgerReopenedCatchesUpIncrementally(t *testing.T) {
	ctx := context.Background()
	st, dir := openStore(t)
	g := generate(t, st, 300)
	l1, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	path := filepath.Join(t.TempDir(), "p.sqlite")
	db := openDB(t, path)
	catchUp(t, db, st, l1.LastSeq/2)
	testutil.NoError(t, db.Close())
	testutil.NoError(t, st.Close())

	st2, err := events.Open(ctx, events.WithDataDir(dir), events.WithSyncAlways(false, time.Minute))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st2.Close() })
	l2, err := st2.Ledger(ctx)
	testutil.NoError(t, err)
	if !l2.Same(l1) || !l2.Created.Equal(l1.Created) || l2.FirstID != l1.FirstID {
		t.Fatalf("ledger after a restart %+v, before %+v", l2, l1)
	}
	g.st = st2
	g.turn("turn-after-restart", "s-beta", randomOutcomes(3), 10)

	db2 := openDB(t, path)
	res := catchUp(t, db2, st2, 0)
	if res.From != l1.LastSeq/2 || res.To <= l1.LastSeq {
		t.Fatalf("catch-up after reopening went %d..%d, want %d..>%d", res.From, res.To, l1.LastSeq/2, l1.LastSeq)
	}
	if got, want := dump(t, db2), rebuild(t, st2); got != want {
		t.Fatalf("incremental dump differs from the rebuild: %s", firstDiff(want, got))
	}
	l3, err := st2.Ledger(ctx)
	testutil.NoError(t, err)
	testutil.NoError(t, db2.Bind(ctx, l3))
}

// An empty database adopts the stream's fingerprint, also while the
// stream is empty (no first event yet): the id is filled in later.
func TestBind_EmptyDatabaseAdoptsTheLedger(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	db := openDB(t, "")
	empty, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if empty.FirstID != "" || empty.LastSeq != 0 {
		t.Fatalf("empty stream read as %+v", empty)
	}
	testutil.NoError(t, db.Bind(ctx, empty))
	if l, ok, _ := db.Ledger(ctx); !ok || !l.Created.Equal(empty.Created) || l.FirstID != "" {
		t.Fatalf("bound to %+v (ok %v)", l, ok)
	}
	generate(t, st, 50)
	catchUp(t, db, st, 0)
	full, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if l, _, _ := db.Ledger(ctx); l.FirstID != full.FirstID || full.FirstID == "" {
		t.Fatalf("bound to %+v, stream %+v", l, full)
	}

	// An empty database bound to another ledger simply rebinds: nothing
	// of the other ledger is in it.
	other, _ := openStore(t)
	generate(t, other, 50)
	db2 := openDB(t, "")
	catchUp(t, db2, other, 0)
	testutil.NoError(t, db2.Close())
	fresh := openDB(t, "")
	testutil.NoError(t, fresh.Bind(ctx, full))
	if _, err := projections.NewProjector(fresh).CatchUp(ctx, other, 0); err != nil {
		t.Fatalf("an empty database bound to another ledger should adopt the new one: %v", err)
	}
}
