package projections_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

func TestRebuild_EqualsIncrementalCatchUpWithRestarts(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 3000)
	clean := rebuild(t, st)
	if !strings.Contains(clean, `"outcome":"unfinished"`) || !strings.Contains(clean, `"disabledReason":"billing"`) ||
		!strings.Contains(clean, `"decision":"candidate_failed"`) || !strings.Contains(clean, `"fallbackNoticeActiveModel":"`) {
		t.Fatalf("generated stream lacks an unfinished turn, a billing disable, a fallback or a notice:\n%.2000s", clean)
	}

	path := filepath.Join(t.TempDir(), "inc.sqlite")
	last := g.lastSeq
	for _, frac := range []uint64{1, 2, 3, 5, 8, 13} {
		to := last * frac / 13
		db, err := projections.Open(context.Background(), path)
		testutil.NoError(t, err)
		res, err := projections.NewProjector(db, projections.WithBatchEvents(int(frac*3))).CatchUp(context.Background(), st, to)
		testutil.NoError(t, err)
		if res.To != to {
			t.Fatalf("catch-up to %d reached %d", to, res.To)
		}
		testutil.NoError(t, db.Close()) // restart between chunks
	}
	db := openDB(t, path)
	if got := dump(t, db); got != clean {
		t.Fatalf("incremental dump differs from the rebuild: %s", firstDiff(clean, got))
	}
	h1, err := db.DumpHash(context.Background())
	testutil.NoError(t, err)
	if !strings.HasPrefix(h1, "sha256:") || len(h1) != 7+64 {
		t.Fatalf("hash %q", h1)
	}
}

func TestCrash_MidBatchResumesWithNothingLostOrDoubled(t *testing.T) {
	st, _ := openStore(t)
	generate(t, st, 1500)
	// Fail at row 1, 24, 47, … until a run writes fewer rows than that:
	// crashes inside the first batch, in later batches and on batch edges.
	if crashed := crashAndResume(t, st, 1, 23, projections.WithBatchEvents(50)); crashed < 5 {
		t.Fatalf("only %d crash points", crashed)
	}
}

// crashAndResume makes catch-ups with opts fail at row first, first+step,
// … (a fresh database each, closed and reopened as after a crash) until
// one writes fewer rows than that, checks that each resumes to the rows of
// a clean rebuild, and returns how many crashed.
func crashAndResume(t *testing.T, st events.Store, first, step int, opts ...projections.ProjectorOption) int {
	t.Helper()
	clean := rebuild(t, st)
	crashed := 0
	for n := first; ; n += step {
		path := filepath.Join(t.TempDir(), "crash.sqlite")
		db, err := projections.Open(context.Background(), path)
		testutil.NoError(t, err)
		_, err = projections.NewProjector(db, append(opts, projections.WithFailAfter(n))...).CatchUp(context.Background(), st, 0)
		testutil.NoError(t, db.Close())
		if err == nil {
			return crashed
		}
		testutil.ErrorIs(t, err, projections.ErrInjected)
		crashed++

		db = openDB(t, path)
		catchUp(t, db, st, 0, opts...)
		if got := dump(t, db); got != clean {
			t.Fatalf("fail at row %d: resumed dump differs: %s", n, firstDiff(clean, got))
		}
	}
}

func TestCatchUp_IsIdempotentAtTheEnd(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 300)
	db := openDB(t, "")
	r1 := catchUp(t, db, st, 0)
	if r1.To != g.lastSeq || r1.Commits != g.commits || r1.Events != g.events {
		t.Fatalf("result %+v, want to %d, %d commits, %d events", r1, g.lastSeq, g.commits, g.events)
	}
	before := dump(t, db)
	r2 := catchUp(t, db, st, 0)
	if r2.Events != 0 || r2.Batches != 0 || dump(t, db) != before {
		t.Fatalf("second catch-up changed something: %+v", r2)
	}
}

// frobbed is an event type the projections do not know.
type frobbed struct {
	ProfileID string `json:"profile_id"`
}

func (frobbed) EventType() string                { return "ProfileFrobbed" }
func (frobbed) EventAggregate() events.Aggregate { return events.AggProfile }
func (f frobbed) ProfileKey() string             { return f.ProfileID }

func TestUnknownType_ErrorNamesTypeAndSequence_OrSkipsAndCounts(t *testing.T) {
	reg := events.NewCatalogRegistry()
	testutil.NoError(t, reg.Register(frobbed{}, 1))
	st, _ := openStore(t, events.WithRegistry(reg))
	g := newGen(t, st)
	g.turn("turn-1", "s", randomOutcomes(1), 10)
	g.commit("", []events.Payload{frobbed{ProfileID: "anthropic:a"}})
	frobSeq := g.lastSeq
	g.turn("turn-2", "s", randomOutcomes(2), 10)

	db := openDB(t, "")
	_, err := projections.NewProjector(db).CatchUp(context.Background(), st, 0)
	var ue *projections.UnknownTypeError
	if !errors.As(err, &ue) || ue.Type != "ProfileFrobbed" || ue.Seq != frobSeq {
		t.Fatalf("error %v, want an UnknownTypeError for ProfileFrobbed at %d", err, frobSeq)
	}
	testutil.ErrorIs(t, err, events.ErrUnknownType)
	if !strings.Contains(err.Error(), "ProfileFrobbed") || !strings.Contains(err.Error(), "sequence "+strconv.FormatUint(frobSeq, 10)) {
		t.Fatalf("message %q does not name the type and sequence", err)
	}
	cp, _ := db.Checkpoint(context.Background())
	if cp != frobSeq-1 {
		t.Fatalf("checkpoint %d after the failure, want %d (every commit before it)", cp, frobSeq-1)
	}

	res := catchUp(t, db, st, 0, projections.WithSkipUnknown(true))
	if res.Skipped != 1 || res.To != g.lastSeq {
		t.Fatalf("skip run %+v", res)
	}
	sk, err := db.SkippedEvents(context.Background())
	testutil.NoError(t, err)
	if len(sk) != 1 || sk[0] != (projections.Skipped{Type: "ProfileFrobbed", Count: 1, FirstSeq: frobSeq, LastSeq: frobSeq}) {
		t.Fatalf("skipped_events %+v", sk)
	}
}

// A catch-up to a known sequence far enough away reads with the store's
// ReadRange (an ordered consumer), an open-ended one with Read (direct
// gets): both write the same rows.
func TestCatchUp_RangeReadEqualsRead(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 3000)
	if g.lastSeq < 1100 {
		t.Fatalf("stream of %d commits is too short for ReadRange", g.lastSeq)
	}
	if _, ok := st.(projections.RangeSource); !ok {
		t.Fatal("the JetStream store has no ReadRange")
	}
	want := rebuild(t, st) // to 0: Read
	db := openDB(t, "")
	res := catchUp(t, db, st, g.lastSeq)
	if got := dump(t, db); got != want || res.To != g.lastSeq {
		t.Fatalf("catch-up to %d reached %d; dump differs from Read's: %s", g.lastSeq, res.To, firstDiff(want, got))
	}
}
