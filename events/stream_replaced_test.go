package events_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// A stream removed and made again under a running reader (a rotation
// while it ran): what each kind of reader does.

// onOwnServer opens a store (with opts) on a NATS server of its own and a
// JetStream client beside it (to remove the stream, or a consumer, behind
// the store's back), and returns both and the server's URL.
func onOwnServer(t *testing.T, opts ...events.Option) (events.Store, jetstream.JetStream, string) {
	t.Helper()
	url := natstest.StartNode(t)
	st, err := events.Open(testutil.Context(t), append([]events.Option{events.WithURL(url)}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st, natstest.JetStream(t, url), url
}

// A cursor whose stream was removed, then created again (a rotation under
// a running exporter), says the stream is gone, not that another reader
// moved its consumer.
func TestCursor_StreamRemovedIsNotAnotherReader(t *testing.T) {
	events.CheckIdleCursorsAtOnce(t)
	st, js, url := onOwnServer(t)
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
	testutil.NoError(t, err)
	c, err := st.Cursor(ctx, events.CursorOptions{Name: "exporter", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	if ds, err := c.Fetch(ctx, 10, time.Second); err != nil || len(ds) != 1 {
		t.Fatalf("first fetch: %d, %v", len(ds), err)
	}
	testutil.NoError(t, js.DeleteStream(ctx, events.StreamName))
	again := reopenAfterDelete(ctx, t, url, events.WithFirstSeq(100))
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
	st, js, _ := onOwnServer(t)
	ctx := testutil.Context(t)
	c, err := st.Cursor(ctx, events.CursorOptions{Name: "exporter", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	if ds, err := c.Fetch(ctx, 10, 100*time.Millisecond); err != nil || len(ds) != 0 {
		t.Fatalf("first fetch: %d, %v", len(ds), err)
	}
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
	st, js, url := onOwnServer(t)
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
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
			again := reopenAfterDelete(ctx, t, url, events.WithFirstSeq(2))
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

// reopenAfterDelete opens a store (so creates the stream) on url right
// after the stream was deleted there. Under load the server may still be
// removing the deleted stream's files and answer the create with 10049
// ("error creating store for stream", seen once in a full parallel run):
// tried again for up to 5 s.
func reopenAfterDelete(ctx context.Context, t *testing.T, url string, opts ...events.Option) events.Store {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := events.Open(ctx, append([]events.Option{events.WithURL(url)}, opts...)...)
		var apiErr *jetstream.APIError
		if err != nil && errors.As(err, &apiErr) && apiErr.ErrorCode == 10049 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		testutil.NoError(t, err)
		return st
	}
}
