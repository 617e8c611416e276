package events_test

import (
	"context"
	"errors"
	"iter"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// appendTurns stores n one-commit turns t-1..t-n on st.
func appendTurns(t *testing.T, st events.Store, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		id := fmt.Sprint("t-", i)
		_, err := st.Append(testutil.Context(t), events.MustSubject("main", events.AggTurn, id), 0, failure(id, 1)[0])
		testutil.NoError(t, err)
	}
}

// fetchSeqs fetches up to n commits from c (waiting up to 10 s for the
// first) and returns them and their sequences.
func fetchSeqs(t *testing.T, c events.Cursor, n int) ([]events.Delivery, []uint64) {
	t.Helper()
	ds, err := c.Fetch(testutil.Context(t), n, 10*time.Second)
	testutil.NoError(t, err)
	seqs := make([]uint64, len(ds))
	for i, d := range ds {
		seqs[i] = d.Seq
	}
	return ds, seqs
}

func ackAll(t *testing.T, ds []events.Delivery) {
	t.Helper()
	for _, d := range ds {
		testutil.NoError(t, d.Ack(testutil.Context(t)))
	}
}

// A cursor delivers commits in order from Since, decoded with their
// subjects; what was acknowledged is not delivered again when the cursor
// is opened again, on a restarted server too.
func TestCursor_ResumesAfterReopen(t *testing.T) {
	st, dir := testutil.OpenStore(t)
	appendTurns(t, st, 5)
	ctx := testutil.Context(t)
	for _, tc := range []struct {
		name  string
		since uint64
		want  string
	}{
		{"from the beginning", 0, "[1 2 3]"},
		{"from sequence 4", 4, "[4 5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := st.Cursor(ctx, events.CursorOptions{Name: fmt.Sprint("since-", tc.since), Since: tc.since, Batch: 10})
			testutil.NoError(t, err)
			ds, seqs := fetchSeqs(t, c, 3)
			if fmt.Sprint(seqs) != tc.want {
				t.Fatalf("delivered %v, want %s", seqs, tc.want)
			}
			for _, d := range ds {
				if d.Err != nil || len(d.Events) != 1 || d.Subject != events.MustSubject("main", events.AggTurn, fmt.Sprint("t-", d.Seq)) {
					t.Fatalf("delivery %+v", d.StoredCommit)
				}
			}
			ackAll(t, ds)
			testutil.NoError(t, c.Close())
		})
	}
	testutil.NoError(t, st.Close())

	st2, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer st2.Close()
	c, err := st2.Cursor(ctx, events.CursorOptions{Name: "since-0", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	ds, seqs := fetchSeqs(t, c, 10)
	if fmt.Sprint(seqs) != "[4 5]" {
		t.Fatalf("reopened cursor delivered %v, want [4 5]", seqs)
	}
	ackAll(t, ds)
	if ds, err := c.Fetch(ctx, 10, 200*time.Millisecond); err != nil || len(ds) != 0 {
		t.Fatalf("after everything was acknowledged: %d deliveries, %v", len(ds), err)
	}
}

// A commit handed back (Nak) or left unacknowledged past AckWait is
// delivered again.
func TestCursor_Redelivery(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	appendTurns(t, st, 1)
	for _, tc := range []struct {
		name, cursor string
		handle       func(d events.Delivery) error
	}{
		{"nak", "redeliver-nak", func(d events.Delivery) error { return d.Nak() }},
		{"ack wait passed", "redeliver-unacked", func(events.Delivery) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := st.Cursor(testutil.Context(t), events.CursorOptions{Name: tc.cursor, AckWait: 300 * time.Millisecond})
			testutil.NoError(t, err)
			defer c.Close()
			ds, seqs := fetchSeqs(t, c, 1)
			if fmt.Sprint(seqs) != "[1]" {
				t.Fatalf("delivered %v", seqs)
			}
			testutil.NoError(t, tc.handle(ds[0]))
			ds, seqs = fetchSeqs(t, c, 1)
			if fmt.Sprint(seqs) != "[1]" {
				t.Fatalf("redelivered %v, want [1]", seqs)
			}
			ackAll(t, ds)
		})
	}
}

// A cursor whose stream was removed, then created again (a rotation under
// a running exporter), says the stream is gone, not that another reader
// moved its consumer.
func TestCursor_StreamRemovedIsNotAnotherReader(t *testing.T) {
	events.CheckIdleCursorsAtOnce(t)
	url := natstest.StartNode(t)
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
	testutil.NoError(t, err)
	c, err := st.Cursor(ctx, events.CursorOptions{Name: "exporter", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	if ds, err := c.Fetch(ctx, 10, time.Second); err != nil || len(ds) != 1 {
		t.Fatalf("first fetch: %d, %v", len(ds), err)
	}
	nc, err := nats.Connect(url)
	testutil.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testutil.NoError(t, err)
	testutil.NoError(t, js.DeleteStream(ctx, events.StreamName))
	again, err := events.Open(ctx, events.WithURL(url), events.WithFirstSeq(100))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	var ferr error
	for deadline := time.Now().Add(20 * time.Second); ferr == nil && time.Now().Before(deadline); {
		_, ferr = c.Fetch(ctx, 10, 200*time.Millisecond)
	}
	if !errors.Is(ferr, events.ErrStreamGone) || errors.Is(ferr, events.ErrCursorReplaced) || !strings.Contains(ferr.Error(), "stream was replaced while this process ran") {
		t.Fatalf("fetch after the stream was replaced: %v; want ErrStreamGone saying it was replaced, not ErrCursorReplaced", ferr)
	}
}

// A consumer deleted while its reader waited with no pull pending gets no
// answer to the next pulls: the reader's quiet fetches find out (once per
// idle check) instead of waiting for ever.
func TestCursor_ConsumerDeletedWhileIdleIsFound(t *testing.T) {
	events.CheckIdleCursorsAtOnce(t)
	url := natstest.StartNode(t)
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c, err := st.Cursor(ctx, events.CursorOptions{Name: "exporter", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	if ds, err := c.Fetch(ctx, 10, 100*time.Millisecond); err != nil || len(ds) != 0 {
		t.Fatalf("first fetch: %d, %v", len(ds), err)
	}
	nc, err := nats.Connect(url)
	testutil.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testutil.NoError(t, err)
	testutil.NoError(t, js.DeleteConsumer(ctx, events.StreamName, "exporter"))
	var ferr error
	for deadline := time.Now().Add(20 * time.Second); ferr == nil && time.Now().Before(deadline); {
		_, ferr = c.Fetch(ctx, 10, 100*time.Millisecond)
	}
	if !errors.Is(ferr, events.ErrCursorReplaced) || !strings.Contains(ferr.Error(), "it was deleted") {
		t.Fatalf("fetch after the consumer was deleted: %v; want ErrCursorReplaced, it was deleted", ferr)
	}
}

// A watch (the metrics fold, `events --follow`) whose stream is removed
// and made again ends with ErrStreamGone instead of going on into the new
// stream (its ordered consumer makes itself again there).
func TestWatch_EndsWhenTheStreamIsReplaced(t *testing.T) {
	url := natstest.StartNode(t)
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
	testutil.NoError(t, err)
	nc, err := nats.Connect(url)
	testutil.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testutil.NoError(t, err)
	var werr error
	n := 0
	for ev, err := range st.(interface {
		Watch(ctx context.Context, from uint64) iter.Seq2[events.Event, error]
	}).Watch(ctx, 1) {
		if err != nil {
			werr = err
			break
		}
		if n++; n == 2 { // the first commit's two events: replace the stream
			testutil.NoError(t, js.DeleteStream(ctx, events.StreamName))
			again, err := events.Open(ctx, events.WithURL(url), events.WithFirstSeq(2))
			testutil.NoError(t, err)
			t.Cleanup(func() { _ = again.Close() })
			_, err = again.Append(ctx, events.MustSubject("main", events.AggTurn, "t-2"), 0, failure("t-2", 1)...)
			testutil.NoError(t, err)
		}
		if n > 2 {
			t.Fatalf("the watch went on into the new stream: %+v", ev)
		}
	}
	if !errors.Is(werr, events.ErrStreamGone) {
		t.Fatalf("the watch ended with %v, want ErrStreamGone", werr)
	}
}
