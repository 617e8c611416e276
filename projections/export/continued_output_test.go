package export

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// After a rotation (docs/operations.md "Start a fresh stream"), a file
// exported from the archived period goes on on the fresh stream created
// with WithFirstSeq past the archive's last sequence: its last record is
// before the stream's first sequence, so the export — followed or one-shot
// — appends the fresh stream's records after the archive's, with the
// note naming both sequences, instead of refusing the file as another
// ledger's. A file of another ledger continuing the same sequences (its
// last record inside the stream, not the stream's) is still refused.
func TestExport_ContinuesAnArchivedPeriodsFile(t *testing.T) {
	ctx := testutil.Context(t)
	archive := testutil.Store(t)
	runScenario(t, ctx, archive, "chain-overload", "chain-overload")
	runScenario(t, ctx, archive, "stored-order", "stored-order") // commits without records at the end
	written := exportAll(t, ctx, archive)
	lastRecord := lastID(t, written).seq
	first := testutil.LastSeq(t, archive) + 1
	if lastRecord+1 >= first {
		t.Fatalf("the archive's last record is at seq %d of %d: want commits without records after it", lastRecord, first-1)
	}

	fresh := testutil.Store(t, events.WithFirstSeq(first))
	runScenario(t, ctx, fresh, "rate-limit-storm", "rate-limit-storm")
	next := exportAll(t, ctx, fresh)
	if len(lines(next)) == 0 || seqOf(t, lines(next)[0]) < first {
		t.Fatalf("the fresh stream's export starts %q, want records from seq %d", next, first)
	}
	other := testutil.Store(t, events.WithFirstSeq(first)) // another ledger, the same sequences
	runScenario(t, ctx, other, "rate-limit-storm", "x-rate-limit-storm")
	foreign := exportAll(t, ctx, other)

	for _, run := range []struct {
		name string
		run  func(t *testing.T, path string, st events.Store) (string, error) // the notes, the error
	}{
		{"follow", func(t *testing.T, path string, st events.Store) (string, error) {
			var notes []string
			cfg := FollowConfig{Consumer: "continued", OnContinue: func(c Continued) { notes = append(notes, c.String()) }}
			if st == other {
				sink, err := OpenJSONLFile(path)
				testutil.NoError(t, err)
				defer sink.Close()
				return strings.Join(notes, "\n"), Follow(ctx, fresh, sink, cfg)
			}
			followFile(t, fresh, path, cfg, len(lines(written))+len(lines(next)))
			return strings.Join(notes, "\n"), nil
		}},
		{"range", func(t *testing.T, path string, _ events.Store) (string, error) {
			var notes []string
			sink, err := OpenJSONLFile(path)
			testutil.NoError(t, err)
			defer sink.Close()
			_, err = RangeReport(ctx, fresh, 0, sink, 0, RangeNotes{Continued: func(c Continued) { notes = append(notes, c.String()) }})
			return strings.Join(notes, "\n"), err
		}},
	} {
		t.Run(run.name+"/archived period", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "decisions.jsonl")
			testutil.NoError(t, os.WriteFile(path, written, 0o644))
			notes, err := run.run(t, path, fresh)
			testutil.NoError(t, err)
			want := fmt.Sprintf("%s: its last record (seq %d) is before the stream's first sequence %d (a stream continuing an archived one, after a rotation): continuing after the archived range: the stream starts at %d",
				path, lastRecord, first, first)
			if notes != want {
				t.Fatalf("notes\n%s\nwant\n%s", notes, want)
			}
			b, err := os.ReadFile(path)
			testutil.NoError(t, err)
			if string(b) != string(written)+string(next) {
				t.Fatalf("the file holds\n%s\nwant the archive's records, then the fresh stream's\n%s%s", b, written, next)
			}
		})
		t.Run(run.name+"/another ledger", func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "decisions.jsonl")
			testutil.NoError(t, os.WriteFile(path, foreign, 0o644))
			notes, err := run.run(t, path, other)
			testutil.ErrorIs(t, err, ErrForeignOutput)
			mine, theirs := lastID(t, foreign), lastID(t, next)
			want := fmt.Sprintf("export: %s: its last record (seq %d, record 1 of its commit: %s) is not the ledger's (%s): export: the output holds records this ledger does not (written from another ledger, before its data was wiped, or in an archived period this stream does not continue: after a rotation, a file of the archived period goes on only on a stream created with --first-seq past its last record); write a new file, or move this one away",
				path, mine.seq, mine.id, theirs.id)
			if err.Error() != want || notes != "" {
				t.Fatalf("error\n%s\nnotes %q\nwant\n%s\nand no note", err, notes, want)
			}
		})
	}
}

// A stream that starts right after the file's last record may have been
// created with --first-seq taken from the file instead of from the
// archived stream: the note asks to check it, and only then.
func TestContinued_AsksToCheckAFirstSeqRightAfterTheFile(t *testing.T) {
	for _, tc := range []struct {
		c     Continued
		check bool
	}{
		{Continued{Output: "d.jsonl", Last: 120557, First: 120558}, true},
		{Continued{Output: "d.jsonl", Last: 120557, First: 121032}, false},
	} {
		got := tc.c.String()
		asks := strings.HasSuffix(got, fmt.Sprintf("; check that %d is the archived stream's last sequence + 1 (nats stream info before it was removed, or state.last_seq in its backup.json), not this file's last record + 1", tc.c.First))
		if asks != tc.check || !strings.HasPrefix(got, "d.jsonl: its last record (seq 120557) is before the stream's first sequence") {
			t.Errorf("%+v: %q (asks to check: %v, want %v)", tc.c, got, asks, tc.check)
		}
	}
}
