package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// lockedBuffer is an io.Writer safe to read while a Follow writes to it.
type lockedBuffer struct{ testutil.Buffer }

func (l *lockedBuffer) lines() []string { return lines([]byte(l.String())) }

// killAfter is a sink that delivers through next and then, once k records
// were delivered in all, cancels the run: an exporter killed mid-stream.
// With crash set it returns an error instead of nil after the killing
// batch, as if the process died between writing and acknowledging.
type killAfter struct {
	next   Sink
	k, n   int
	cancel context.CancelFunc
	crash  bool
}

func (s *killAfter) Export(ctx context.Context, recs []Record) error {
	if err := s.next.Export(ctx, recs); err != nil {
		return err
	}
	s.n += len(recs)
	if s.n >= s.k {
		s.cancel()
		if s.crash {
			return errors.New("killed before the acknowledgement")
		}
	}
	return nil
}

// follow runs Follow in the background; cancel stops it, wait waits for
// it to return.
func follow(t *testing.T, st events.Store, sink Sink, cfg FollowConfig) (ctx context.Context, cancel context.CancelFunc, wait func()) {
	t.Helper()
	ctx, cancel = context.WithCancel(testutil.Context(t))
	return ctx, cancel, followCtx(t, ctx, st, sink, cfg)
}

// followCtx runs Follow in the background with ctx.
func followCtx(t *testing.T, ctx context.Context, st events.Store, sink Sink, cfg FollowConfig) (wait func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, st, sink, cfg) }()
	return func() {
		t.Helper()
		select {
		case err := <-done:
			testutil.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("Follow did not return")
		}
	}
}

// waitLines polls get until it returns at least n lines.
func waitLines(t *testing.T, get func() []string, n int) {
	t.Helper()
	testutil.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := len(get()); got < n {
			return fmt.Errorf("%d lines, want %d", got, n)
		}
		return nil
	})
}

// An exporter following with a durable consumer, killed after K records
// and restarted while new decisions keep arriving, emits every record
// exactly once and in order across the two runs.
func TestFollow_KilledAndRestartedEmitsEveryRecordOnce(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	before := lines(exportAll(t, ctx, st))
	const k = 7
	cfg := FollowConfig{Consumer: "test-export", Batch: 2}

	var out1 lockedBuffer
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	kill := &killAfter{next: NewJSONL(&out1), k: k, cancel: cancel1}
	followCtx(t, ctx1, st, kill, cfg)()
	first := out1.lines()
	if len(first) < k || len(first) >= len(before) {
		t.Fatalf("first run emitted %d records, want between %d and %d", len(first), k, len(before)-1)
	}

	var out2 lockedBuffer
	_, cancel2, wait2 := follow(t, st, NewJSONL(&out2), cfg)
	// New decisions arrive while the restarted exporter runs.
	runScenario(t, ctx, st, "chain-overload", "live")
	all := lines(exportAll(t, ctx, st))
	waitLines(t, out2.lines, len(all)-len(first))
	cancel2()
	wait2()
	second := out2.lines()

	got := append(append([]string{}, first...), second...)
	if !reflect.DeepEqual(got, all) {
		t.Fatalf("union of the two runs: %d records, want %d exactly once in order\nfirst: %d, second: %d",
			len(got), len(all), len(first), len(second))
	}
}

// An exporter that dies after writing a batch to its file but before the
// acknowledgement gets the batch again on restart; the file sink resumes
// after its last line and writes nothing twice.
func TestFollow_CrashBetweenWriteAndAckFileStaysExactlyOnce(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	all := lines(exportAll(t, ctx, st))
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	cfg := FollowConfig{Consumer: "test-file", Batch: 3, AckWait: time.Second} // the restart waits out the batch handed back
	read := func() []string {
		b, err := os.ReadFile(path)
		testutil.NoError(t, err)
		return lines(b)
	}

	f1, err := OpenJSONLFile(path)
	testutil.NoError(t, err)
	ctx1, cancel1 := context.WithCancel(ctx)
	defer cancel1()
	kill := &killAfter{next: f1, k: 10, crash: true, cancel: cancel1}
	followCtx(t, ctx1, st, kill, cfg)()
	testutil.NoError(t, f1.Close())
	written := read()
	if len(written) < 10 || len(written) >= len(all) {
		t.Fatalf("first run wrote %d records", len(written))
	}

	f2, err := OpenJSONLFile(path)
	testutil.NoError(t, err)
	_, cancel2, wait2 := follow(t, st, f2, cfg)
	waitLines(t, read, len(all))
	time.Sleep(200 * time.Millisecond) // a duplicate would arrive now
	cancel2()
	wait2()
	testutil.NoError(t, f2.Close())
	if got := read(); !reflect.DeepEqual(got, all) {
		t.Fatalf("file has %d records, want %d exactly once in order:\n%s", len(got), len(all), strings.Join(got, "\n"))
	}
}

// Records of one commit are numbered, and a redelivered commit is dropped
// record by record: a partly written commit is completed, not repeated.
func TestJSONL_DropsRecordsAlreadyWrittenWithinACommit(t *testing.T) {
	mk := func(seq uint64, idx int, turn string) events.Event {
		ev := events.New("main", turn, t0(), events.FallbackStepped{TurnID: turn, Decision: "skip_candidate"})
		ev.Seq, ev.Index = seq, idx
		return ev
	}
	commit := []events.Event{mk(5, 0, "a"), mk(5, 1, "b"), mk(5, 2, "c"), mk(6, 0, "d")}
	recs := Records(commit)
	var buf bytes.Buffer
	j := NewJSONL(&buf)
	testutil.NoError(t, j.Export(context.Background(), recs[:2]))
	testutil.NoError(t, j.Export(context.Background(), recs))
	testutil.NoError(t, j.Export(context.Background(), recs))
	got := lines(buf.Bytes())
	if len(got) != 4 || !strings.Contains(got[2], `"turnId":"c"`) || !strings.Contains(got[3], `"turnId":"d"`) {
		t.Fatalf("got %d lines:\n%s", len(got), strings.Join(got, "\n"))
	}
}
