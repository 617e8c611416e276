package events_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// Every read through an ordered consumer deletes its consumer once done:
// 60 range reads (what a gateway reading finished turns back does) leave
// none on the server, which holds at most 1,000 per stream by default —
// the leftovers used to stay five minutes each, and past 1,000 every
// read, follow and engine start failed.
func TestOrderedReads_LeaveNoConsumer(t *testing.T) {
	st, _ := testutil.OpenStore(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	ctx := testutil.Context(t)
	for i := range 3 {
		if _, err := st.Append(ctx, "fledger.main.session.s1", uint64(i), events.New("main", "s1", time.UnixMilli(1_700_000_000_000),
			events.SessionReset{Session: "s1", Kind: "new"})); err != nil {
			t.Fatal(err)
		}
	}
	for range 60 {
		n := 0
		for _, err := range readRange(st)(ctx, 1, 0) {
			testutil.NoError(t, err)
			n++
		}
		if n != 3 {
			t.Fatalf("read %d events, want 3", n)
		}
	}
	js, err := jetstream.New(natstest.DialWriter(t, st.(natstest.Listener)))
	testutil.NoError(t, err)
	s, err := js.Stream(ctx, events.StreamName)
	testutil.NoError(t, err)
	var left int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		info, err := s.Info(ctx)
		testutil.NoError(t, err)
		if left = info.State.Consumers; left == 0 {
			return
		}
	}
	t.Fatalf("%d consumers left on the stream after 60 reads", left)
}
