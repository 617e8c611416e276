package projections_test

import (
	"context"
	"iter"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// damagedSource is src as a damaged stream reads: the commits at the
// sequences in missing are gone (read as the store reports a gap: one
// *events.DecodeError wrapping events.ErrGap per run, before the next
// message), and those in stray are messages that are not fledger
// commits.
type damagedSource struct {
	src     projections.Source
	missing map[uint64]bool
	stray   map[uint64]bool
}

func (d *damagedSource) Read(ctx context.Context, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		var gapFrom, replaced uint64
		for ev, err := range d.src.Read(ctx, from) {
			if err != nil {
				yield(ev, err)
				return
			}
			if ev.Seq == replaced {
				continue // the rest of a commit already replaced
			}
			if d.missing[ev.Seq] {
				if gapFrom == 0 {
					gapFrom = ev.Seq
				}
				replaced = ev.Seq
				continue
			}
			if gapFrom != 0 {
				if !yield(events.Event{Seq: gapFrom, Index: -1}, &events.DecodeError{Seq: gapFrom, Through: ev.Seq - 1, Index: -1, Err: events.ErrGap}) {
					return
				}
				gapFrom = 0
			}
			if d.stray[ev.Seq] {
				replaced = ev.Seq
				if !yield(events.Event{Seq: ev.Seq, Index: -1}, &events.DecodeError{Seq: ev.Seq, Subject: "fledger.main.turn.oops", Size: 5, Index: -1,
					Err: errString("invalid character 'h' looking for beginning of value")}) {
					return
				}
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// A message that is not a fledger commit and sequences missing from the
// stream are quarantined, not fatal: recorded in the quarantined table
// with the checkpoint, so a rebuild and an incremental catch-up in small
// chunks with restarts (chunk ends inside a missing run included) record
// the same rows and fold every real commit.
func TestQuarantine_RecordedWithTheCheckpoint_RebuildReportsTheSame(t *testing.T) {
	st, _ := openStore(t)
	g := generate(t, st, 600)
	last := g.lastSeq
	if last < 40 {
		t.Fatalf("only %d commits", last)
	}
	a, b := last/4, last/2
	src := &damagedSource{src: st, missing: map[uint64]bool{a: true, b: true, b + 1: true, b + 2: true}, stray: map[uint64]bool{a + 3: true, last - 1: true}}
	want := []projections.Quarantined{
		{Seq: a, LastSeq: a, Kind: projections.QuarantineMissing, Reason: "missing from the stream"},
		{Seq: a + 3, LastSeq: a + 3, Kind: projections.QuarantineUndecodable, Subject: "fledger.main.turn.oops", Size: 5, Reason: "invalid character 'h' looking for beginning of value"},
		{Seq: b, LastSeq: b + 2, Kind: projections.QuarantineMissing, Reason: "missing from the stream"},
		{Seq: last - 1, LastSeq: last - 1, Kind: projections.QuarantineUndecodable, Subject: "fledger.main.turn.oops", Size: 5, Reason: "invalid character 'h' looking for beginning of value"},
	}

	db := openDB(t, "")
	res := catchUp(t, db, src, 0)
	if res.To != last || res.Quarantined != len(want) {
		t.Fatalf("catch-up reached %d with %d quarantined, want %d and %d", res.To, res.Quarantined, last, len(want))
	}
	got, err := db.Quarantined(context.Background())
	testutil.NoError(t, err)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("quarantined\n got %+v\nwant %+v", got, want)
	}
	clean := dump(t, db)
	if !strings.Contains(clean, "# quarantined\n") || strings.Count(clean, `"kind":"missing"`) != 2 {
		t.Fatalf("dump lacks the quarantined rows:\n%.500s", clean[strings.Index(clean, "# quarantined"):])
	}
	// Every real commit is folded: the same rows as the undamaged stream
	// minus what the missing and stray commits held.
	cp, err := db.Checkpoint(context.Background())
	testutil.NoError(t, err)
	if cp != last {
		t.Fatalf("checkpoint %d, want %d", cp, last)
	}

	for _, chunks := range [][]uint64{{a - 1, a, a + 3, b + 1, b + 2, last - 1, last}, {b, last}} {
		path := filepath.Join(t.TempDir(), "inc.sqlite")
		for _, to := range chunks {
			db, err := projections.Open(context.Background(), path)
			testutil.NoError(t, err)
			_, err = projections.NewProjector(db, projections.WithBatchEvents(3)).CatchUp(context.Background(), src, to)
			testutil.NoError(t, err)
			testutil.NoError(t, db.Close())
		}
		inc := openDB(t, path)
		if got := dump(t, inc); got != clean {
			t.Fatalf("chunks %v: incremental dump differs from the rebuild: %s", chunks, firstDiff(clean, got))
		}
	}
}
