package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// SettleDuplicates makes the server forget the ids of the duplicate
// window at once — a message id published before it is stored again after
// it — and leaves the stream's window as it was.
func TestSettleDuplicates_ServerForgetsTheWindowsIds(t *testing.T) {
	ctx := context.Background()
	st, _ := testutil.OpenStore(t, testutil.NoFsync, events.WithListen(0),
		events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	rb, err := events.NewRawBench(ctx, st, 16, false)
	testutil.NoError(t, err)
	subj, err := events.Subject("a1", events.AggTurn, "t1")
	testutil.NoError(t, err)
	publish := func() {
		t.Helper()
		testutil.NoError(t, rb.PublishCommitAsync(subj, "settle-m1", []byte(`{}`)))
		select {
		case <-rb.AsyncComplete():
		case <-time.After(10 * time.Second):
			t.Fatal("publish not acknowledged in 10 s")
		}
		n, err := rb.Failed()
		testutil.NoError(t, err)
		if n != 0 {
			t.Fatalf("%d publishes failed", n)
		}
	}
	lastSeq := func() uint64 {
		t.Helper()
		seq, err := st.LastSeq(ctx, "")
		testutil.NoError(t, err)
		return seq
	}
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	window := func() time.Duration {
		t.Helper()
		s, err := js.Stream(ctx, events.StreamName)
		testutil.NoError(t, err)
		return s.CachedInfo().Config.Duplicates
	}
	before := window()

	publish()
	first := lastSeq()
	publish() // within the window: the server keeps the first
	if got := lastSeq(); got != first {
		t.Fatalf("a re-sent message id was stored again (last seq %d → %d) before the settle", first, got)
	}
	testutil.NoError(t, rb.SettleDuplicates(ctx))
	publish()
	if got := lastSeq(); got != first+1 {
		t.Fatalf("after the settle the re-sent id left last seq at %d, want %d (stored again)", got, first+1)
	}
	if got := window(); got != before {
		t.Fatalf("duplicate window %v after the settle, want %v as before", got, before)
	}
}
