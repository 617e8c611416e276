package events_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// readRange is the store's ReadRange (the JetStream store has it; the
// projector finds it the same way).
func readRange(st events.Store) func(ctx context.Context, from, to uint64) iter.Seq2[events.Event, error] {
	return st.(interface {
		ReadRange(ctx context.Context, from, to uint64) iter.Seq2[events.Event, error]
	}).ReadRange
}

// ReadRange yields what Read yields from from through to (0 or past the
// end: the last sequence when it starts), undecodable messages included as
// *DecodeErrors, and stops when the caller stops.
func TestReadRange_YieldsReadsEventsThroughTo(t *testing.T) {
	t.Run("ordered consumer", testReadRangeThroughTo)
	// A consumer that never delivers its first message (seen on a 3-node
	// cluster): the read goes on with direct gets, yielding the same.
	t.Run("stalled consumer, direct gets", func(t *testing.T) {
		events.StallFirstMessage(t)
		testReadRangeThroughTo(t)
	})
}

func testReadRangeThroughTo(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	for i := 1; i <= 6; i++ {
		if i == 4 { // sequence 4: a stray message
			_, err := events.ConnOf(st).Request("fledger.main.turn.oops", []byte("hello"), 5e9)
			testutil.NoError(t, err)
			continue
		}
		_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, fmt.Sprintf("t-%d", i)), 0, failure(fmt.Sprintf("t-%d", i), 1)...)
		testutil.NoError(t, err)
	}
	// Each message as "seq.index", a decode error as "seq!".
	show := func(seq iter.Seq2[events.Event, error], stopAfter int) string {
		out := ""
		for ev, err := range seq {
			var de *events.DecodeError
			switch {
			case errors.As(err, &de):
				out += fmt.Sprintf("%d! ", de.Seq)
			case err != nil:
				t.Fatalf("read: %v", err)
			default:
				out += fmt.Sprintf("%d.%d ", ev.Seq, ev.Index)
			}
			if stopAfter--; stopAfter == 0 {
				break
			}
		}
		return out
	}
	for _, tc := range []struct {
		from, to  uint64
		stopAfter int
		want      string
	}{
		{1, 0, -1, "1.0 1.1 2.0 2.1 3.0 3.1 4! 5.0 5.1 6.0 6.1 "},
		{0, 0, -1, "1.0 1.1 2.0 2.1 3.0 3.1 4! 5.0 5.1 6.0 6.1 "},
		{2, 4, -1, "2.0 2.1 3.0 3.1 4! "},
		{5, 99, -1, "5.0 5.1 6.0 6.1 "},
		{6, 6, -1, "6.0 6.1 "},
		{7, 0, -1, ""},
		{5, 3, -1, ""},
		{1, 0, 3, "1.0 1.1 2.0 "},
	} {
		got := show(readRange(st)(ctx, tc.from, tc.to), tc.stopAfter)
		if got != tc.want {
			t.Errorf("ReadRange(%d, %d) stop after %d = %q, want %q", tc.from, tc.to, tc.stopAfter, got, tc.want)
		}
	}
	if want := show(st.Read(ctx, 1), -1); show(readRange(st)(ctx, 1, 0), -1) != want {
		t.Fatalf("ReadRange differs from Read %q", want)
	}
}

// A cancelled context ends ReadRange with the context's error.
func TestReadRange_CancelledContext(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
	testutil.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var errs []error
	for _, err := range readRange(st)(cctx, 1, 0) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("yielded %v, want one error wrapping context.Canceled", errs)
	}
}

// TestReadRange_CancelledMidRead: a read cancelled after it began ends
// with an error wrapping context.Canceled, never as a whole read — also
// with one decode worker (GOMAXPROCS 1), where the consumer's own result
// is the read's.
func TestReadRange_CancelledMidRead(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	for i := range 300 {
		id := fmt.Sprintf("t-%d", i)
		_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, id), 0, failure(id, 1)...)
		testutil.NoError(t, err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var n int
	var last error
	for _, err := range readRange(st)(cctx, 1, 0) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 10 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) || n >= 600 {
		t.Fatalf("after %d events the read ended with %v, want an error wrapping context.Canceled before the end", n, last)
	}
}
