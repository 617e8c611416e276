package export

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// A file written from another ledger (or before the data directory was
// wiped) is refused, by a followed and by a one-shot export, naming the
// file, instead of resuming after its last record: past the stream's end
// everything before would be skipped silently; inside it, records of
// another ledger would be continued as if they were this one's.
func TestExport_RefusesAFileOfAnotherLedger(t *testing.T) {
	ctx := testutil.Context(t)
	first, _ := testutil.OpenStore(t)
	runAll(t, ctx, first)
	written := exportAll(t, ctx, first)
	last := lastID(t, written)

	short, _ := testutil.OpenStore(t) // wiped, fewer commits since
	runScenario(t, ctx, short, "chain-overload", "chain-overload")
	shortEnd := testutil.LastSeq(t, short)
	other, _ := testutil.OpenStore(t) // the same scenarios under other agents
	for _, n := range allScenarios {
		runScenario(t, ctx, other, n, "x-"+n)
	}
	theirs := lastID(t, exportAll(t, ctx, other))
	if theirs.seq != last.seq {
		t.Fatalf("the other ledger's last record is at seq %d, the file's at %d", theirs.seq, last.seq)
	}

	for _, tc := range []struct {
		name string
		st   events.Store
		want string // %[1]s = the file
	}{
		{"past the stream's end", short, fmt.Sprintf("export: %%[1]s holds records up to seq %d, past the stream's last sequence %d: export: the output holds records this ledger does not (written from another ledger, before its data was wiped, or in an archived period this stream does not continue: after a rotation, a file of the archived period goes on only on a stream created with --first-seq past its last record); resuming after it would skip every record up to seq %d: write a new file, or move this one away",
			last.seq, shortEnd, last.seq)},
		{"another ledger's record", other, fmt.Sprintf("export: %%[1]s: its last record (seq %d, record 1 of its commit: %s) is not the ledger's (%s): export: the output holds records this ledger does not (written from another ledger, before its data was wiped, or in an archived period this stream does not continue: after a rotation, a file of the archived period goes on only on a stream created with --first-seq past its last record); write a new file, or move this one away",
			last.seq, last.id, theirs.id)},
	} {
		for _, run := range []struct {
			name string
			run  func(context.Context, events.Store, Sink) error
		}{
			{"follow", func(ctx context.Context, st events.Store, s Sink) error {
				return Follow(ctx, st, s, FollowConfig{Consumer: "foreign"})
			}},
			{"range", func(ctx context.Context, st events.Store, s Sink) error {
				_, err := Range(ctx, st, 0, s, 0)
				return err
			}},
		} {
			t.Run(tc.name+"/"+run.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "decisions.jsonl")
				testutil.NoError(t, os.WriteFile(path, written, 0o644))
				sink, err := OpenJSONLFile(path)
				testutil.NoError(t, err)
				defer sink.Close()
				err = run.run(ctx, tc.st, sink)
				testutil.ErrorIs(t, err, ErrForeignOutput)
				if want := fmt.Sprintf(tc.want, path); err.Error() != want {
					t.Fatalf("error\n%s\nwant\n%s", err, want)
				}
				b, err := os.ReadFile(path)
				testutil.NoError(t, err)
				if string(b) != string(written) {
					t.Fatalf("the refused file changed: %d bytes, was %d", len(b), len(written))
				}
			})
		}
	}
}

// idAt is a JSONL line's place and identity.
type idAt struct {
	seq uint64
	id  RecordID
}

// lastID is the last line of JSONL output's place and identity; the
// fixture's last commit holds one record.
func lastID(t *testing.T, out []byte) idAt {
	t.Helper()
	ls := lines(out)
	var r struct {
		Seq    uint64                 `json:"seq"`
		Idx    int                    `json:"idx"`
		Time   projections.UnixMillis `json:"time"`
		Agent  string                 `json:"agent"`
		TurnID string                 `json:"turnId"`
	}
	testutil.NoError(t, json.Unmarshal([]byte(ls[len(ls)-1]), &r))
	if len(ls) > 1 && seqOf(t, ls[len(ls)-2]) == r.Seq {
		t.Fatalf("the last commit holds several records")
	}
	return idAt{seq: r.Seq, id: RecordID{Time: r.Time, Agent: r.Agent, TurnID: r.TurnID}}
}
