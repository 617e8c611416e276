package export

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/filelock"
	"github.com/fledger/fledger/internal/testutil"
)

// followFile follows st into the JSONL file path with cfg until the
// consumer has acknowledged the stream's last sequence and the file holds
// want, then stops; it returns the file's lines and the moves reported.
func followFile(t *testing.T, st events.Store, path string, cfg FollowConfig, want int) (got, moves []string) {
	t.Helper()
	ctx := testutil.Context(t)
	end := testutil.LastSeq(t, st)
	var acked atomic.Uint64
	cfg.OnBatch = func(last uint64, _ int) { acked.Store(last) }
	cfg.OnMove = func(stood events.CursorState, to uint64) {
		moves = append(moves, fmt.Sprintf("acked %d pending %d -> %d", stood.Acked, stood.Pending, to))
	}
	sink, err := OpenJSONLFile(path)
	testutil.NoError(t, err)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := followCtx(t, fctx, st, sink, cfg)
	read := func() []string {
		b, err := os.ReadFile(path)
		testutil.NoError(t, err)
		return lines(b)
	}
	testutil.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n, a := len(read()), acked.Load(); n < want || a < end {
			return fmt.Errorf("%d lines (want %d), acknowledged through %d (want %d)", n, want, a, end)
		}
		return nil
	})
	cancel()
	wait()
	testutil.NoError(t, sink.Close())
	return read(), moves
}

// The file, not the durable consumer, decides where a followed export
// resumes. Run 1 exports to a; run 2, on the same consumer, to a new file
// b gets every record too (before: nothing, the consumer stood at the end);
// after more commits run 3 resumes b with exactly what follows it, run 4
// resumes a, which the consumer had passed for b, and a new file c starts
// at Since. Each file ends holding every record it should once, in order.
func TestFollow_FileDecidesWhereTheExportResumes(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	end1 := testutil.LastSeq(t, st)
	first := lines(exportAll(t, ctx, st))
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name+".jsonl") }
	midSeq := seqOf(t, first[len(first)/2])

	type step struct {
		name  string
		more  bool   // commits with decisions appended before the run
		file  string // a, b or c
		since uint64
		from  uint64 // the file holds every record from this sequence on
		moved string // the move reported, "" for none
	}
	var aLast, end3 uint64
	for _, s := range []step{
		{name: "run 1: a new consumer exports everything to a", file: "a"},
		{name: "run 2: the same consumer, a new file b gets every record", file: "b",
			moved: fmt.Sprintf("acked %d pending 0 -> 1", end1)},
		{name: "run 3: more commits, b resumes after its last record", more: true, file: "b"},
		{name: "run 4: a resumes after its last record, which the consumer passed", file: "a",
			moved: "acked END3 pending 0 -> A_LAST"},
		{name: "run 5: a new file c with Since gets the records from Since on", file: "c", since: midSeq, from: midSeq,
			moved: fmt.Sprintf("acked END3 pending 0 -> %d", midSeq)},
	} {
		t.Run(s.name, func(t *testing.T) {
			if s.more {
				runScenario(t, ctx, st, "chain-overload", "later")
				runScenario(t, ctx, st, "anthropic-overload", "later")
				end3 = testutil.LastSeq(t, st)
			}
			var want []string
			for _, l := range lines(exportAll(t, ctx, st)) {
				if seqOf(t, l) >= s.from {
					want = append(want, l)
				}
			}
			got, moves := followFile(t, st, path(s.file), FollowConfig{Consumer: "shared", Batch: 4, Since: s.since}, len(want))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s holds %d records, want %d exactly once in order", s.file, len(got), len(want))
			}
			wantMoved := strings.NewReplacer("END3", fmt.Sprint(end3), "A_LAST", fmt.Sprint(aLast)).Replace(s.moved)
			if strings.Join(moves, "; ") != wantMoved {
				t.Fatalf("moves %q, want %q", moves, wantMoved)
			}
			if s.file == "a" {
				aLast = seqOf(t, got[len(got)-1])
			}
		})
	}
}

// A file's export needs its consumer to itself, and a file its one
// writer: while an exporter runs, a second one is refused at once, on a
// new file with ErrCursorInUse naming the consumer (it would have to be
// moved under the running one), on the running one's own file by the
// file's lock, naming the file and the holder's pid; the running export
// goes on unharmed.
func TestFollow_FileExportRefusesAConsumerInUse(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	all := lines(exportAll(t, ctx, st))
	dir := t.TempDir()
	running := filepath.Join(dir, "running.jsonl")
	sink, err := OpenJSONLFile(running)
	testutil.NoError(t, err)
	defer sink.Close()
	var acked atomic.Uint64
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait := followCtx(t, fctx, st, sink, FollowConfig{Consumer: "busy", OnBatch: func(last uint64, _ int) { acked.Store(last) }})
	end := testutil.LastSeq(t, st)
	testutil.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if a := acked.Load(); a < end {
			return fmt.Errorf("acknowledged through %d, want %d", a, end)
		}
		return nil
	})

	s2, err := OpenJSONLFile(filepath.Join(dir, "new.jsonl"))
	testutil.NoError(t, err)
	start := time.Now()
	err = Follow(ctx, st, s2, FollowConfig{Consumer: "busy"})
	testutil.ErrorIs(t, err, events.ErrCursorInUse)
	if !strings.Contains(err.Error(), "cursor busy:") || time.Since(start) > 5*time.Second {
		t.Fatalf("error %q after %s, want one naming cursor busy at once", err, time.Since(start))
	}
	testutil.NoError(t, s2.Close())

	_, err = OpenJSONLFile(running)
	testutil.ErrorIs(t, err, filelock.ErrLocked)
	want := fmt.Sprintf("export: %s is being written by another exporter (pid %d): locked by another process; a file has one writer, so stop that one or write another file", running, os.Getpid())
	if runtime.GOOS != "linux" {
		want = strings.Replace(want, fmt.Sprintf(" (pid %d)", os.Getpid()), "", 1)
	}
	if err.Error() != want {
		t.Fatalf("second writer of the file: %q, want %q", err, want)
	}

	runScenario(t, ctx, st, "chain-overload", "later")
	n := len(lines(exportAll(t, ctx, st)))
	waitLines(t, func() []string { b, _ := os.ReadFile(running); return lines(b) }, n)
	cancel()
	wait()
	b, err := os.ReadFile(running)
	testutil.NoError(t, err)
	if got := lines(b); len(got) != n || !reflect.DeepEqual(got[:len(all)], all) {
		t.Fatalf("the running export wrote %d records, want %d", len(got), n)
	}
}

// Without a file the consumer's position decides, as before: a second
// run on the same consumer, to stdout or to an OTLP collector, gets only
// the records committed since the first run, never the earlier ones again.
func TestFollow_WithoutAFileTheConsumerDecides(t *testing.T) {
	ctx := testutil.Context(t)
	for _, tc := range []struct {
		name string
		sink func(t *testing.T) (Sink, func() []string)
	}{
		{"stdout", func(t *testing.T) (Sink, func() []string) {
			var buf lockedBuffer
			return NewJSONL(&buf), buf.lines
		}},
		{"otlp", func(t *testing.T) (Sink, func() []string) {
			rc := &receiver{}
			srv := httptest.NewServer(rc)
			t.Cleanup(srv.Close)
			o, err := NewOTLP(ctx, fastRetry(srv.URL, 8))
			testutil.NoError(t, err)
			t.Cleanup(func() { _ = o.Shutdown(context.Background()) })
			return o, func() []string {
				var out []string
				for _, lr := range rc.got() {
					out = append(out, fmt.Sprint(attrsOf(lr)["seq"], "/", attrsOf(lr)["idx"]))
				}
				return out
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := testutil.OpenStore(t)
			runAll(t, ctx, st)
			n1 := len(lines(exportAll(t, ctx, st)))
			cfg := FollowConfig{Consumer: "decides", Batch: 4}
			sink1, got1 := tc.sink(t)
			if _, ok := sink1.(Holder); ok && tc.name == "otlp" {
				t.Fatal("the OTLP sink is a Holder")
			}
			_, cancel1, wait1 := follow(t, st, sink1, cfg)
			waitLines(t, got1, n1)
			cancel1()
			wait1()

			runScenario(t, ctx, st, "chain-overload", "later")
			n2 := len(lines(exportAll(t, ctx, st))) - n1
			sink2, got2 := tc.sink(t)
			var moves int
			cfg.OnMove = func(events.CursorState, uint64) { moves++ }
			_, cancel2, wait2 := follow(t, st, sink2, cfg)
			waitLines(t, got2, n2)
			time.Sleep(200 * time.Millisecond) // an earlier record would arrive now
			cancel2()
			wait2()
			if got := len(got2()); got != n2 || moves != 0 {
				t.Fatalf("second run: %d records (want %d, the new ones), %d moves", got, n2, moves)
			}
		})
	}
}

// An exporter killed with deliveries it never acknowledged (nor handed
// back) leaves them pending: the server would deliver them again only
// after AckWait, after newer commits, and the file, already past them,
// would drop them. The next run of the file moves the consumer back to
// the file's last record: every record once, in order. On a consumer
// that may be shared it first waits that AckWait out (the deliveries could
// be a live exporter's); on the file's own consumer (Owned: the exporter
// holds the file's lock) it moves at once — with an AckWait of a minute,
// within followFile's 10 s.
func TestFollow_FileResumesInOrderAfterAKilledExporter(t *testing.T) {
	for _, c := range []struct {
		name    string
		owned   bool
		ackWait time.Duration
	}{
		{"shared consumer: waits the AckWait out", false, time.Second},
		{"owned consumer: moves at once", true, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testutil.Context(t)
			st, _ := testutil.OpenStore(t)
			runAll(t, ctx, st)
			path := filepath.Join(t.TempDir(), "d.jsonl")
			cfg := FollowConfig{Consumer: "killed", Batch: 64, AckWait: c.ackWait, Owned: c.owned}
			before, _ := followFile(t, st, path, cfg, len(lines(exportAll(t, ctx, st))))
			last := testutil.LastSeq(t, st)

			runScenario(t, ctx, st, "chain-overload", "later")
			// The killed exporter: it fetched the new commits (decisions
			// among them), fewer than MaxAckPending, and died.
			n := int(testutil.LastSeq(t, st) - last)
			cur, err := st.Cursor(ctx, events.CursorOptions{Name: "killed", Batch: 64, AckWait: c.ackWait})
			testutil.NoError(t, err)
			ds, err := cur.Fetch(ctx, n, 5*time.Second)
			testutil.NoError(t, err)
			if len(ds) != n || ds[0].Seq != last+1 || n >= 64 {
				t.Fatalf("fetched %d commits from %d, want %d (< 64) from %d", len(ds), ds[0].Seq, n, last+1)
			}
			testutil.NoError(t, cur.Close())
			runScenario(t, ctx, st, "anthropic-overload", "later")

			want := lines(exportAll(t, ctx, st))
			got, moves := followFile(t, st, path, cfg, len(want))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("file holds %d records, want %d exactly once in order", len(got), len(want))
			}
			wantMove := fmt.Sprintf("acked %d pending %d -> %d", last, n, seqOf(t, before[len(before)-1]))
			if len(moves) != 1 || moves[0] != wantMove {
				t.Fatalf("moves %q, want %q", moves, wantMove)
			}
		})
	}
}
