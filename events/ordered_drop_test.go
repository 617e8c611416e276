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

// Every read through an ordered consumer deletes its consumer once done,
// and Close waits for the deletes in flight: 60 range reads (what a
// gateway reading finished turns back does) and a follow, by a client of
// another process's server, leave none on the server once the client has
// closed. The server holds at most 1,000 consumers per stream by default;
// leftovers used to stay five minutes each, and past 1,000 every read,
// follow and engine start failed.
func TestOrderedReads_LeaveNoConsumer(t *testing.T) {
	srv, client := testutil.OpenPair(t, events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	ctx := testutil.Context(t)
	for i := range 3 {
		if _, err := client.Append(ctx, "fledger.main.session.s1", uint64(i), events.New("main", "s1", time.UnixMilli(1_700_000_000_000),
			events.SessionReset{Session: "s1", Kind: "new"})); err != nil {
			t.Fatal(err)
		}
	}
	for range 60 {
		n := 0
		for _, err := range readRange(client)(ctx, 1, 0) {
			testutil.NoError(t, err)
			n++
		}
		if n != 3 {
			t.Fatalf("read %d events, want 3", n)
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	for c, err := range client.Follow(fctx, events.FollowOptions{From: 1}) {
		testutil.NoError(t, err)
		if c.Seq == 3 {
			break
		}
	}
	cancel()
	testutil.NoError(t, client.Close())

	js, err := jetstream.New(natstest.DialWriter(t, srv.(natstest.Listener)))
	testutil.NoError(t, err)
	s, err := js.Stream(ctx, events.StreamName)
	testutil.NoError(t, err)
	info, err := s.Info(ctx)
	testutil.NoError(t, err)
	if n := info.State.Consumers; n != 0 {
		t.Fatalf("%d consumers left on the stream once the reader closed", n)
	}
}
