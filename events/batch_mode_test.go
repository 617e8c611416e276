package events_test

import (
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// What auto chooses seen from a client: fledger's embedded server reached
// through its listener sends atomic batches (it fsyncs every write); a
// one-replica stream on another server, whose fsync policy a client
// cannot see, is pipelined (a standalone nats-server with its default
// sync interval ran 64 appenders at a quarter of the pipelined rate in
// batches), unless --atomic-batches on says otherwise.
func TestAtomicBatches_AutoSeenFromAClient(t *testing.T) {
	_, client := testutil.OpenPair(t, events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	g := events.GroupCommitStats(client)
	if !g.AtomicBatches || g.BatchesWhy != "fledger's embedded server (fsync every write) through its listener" {
		t.Errorf("through the listener: %v %q", g.AtomicBatches, g.BatchesWhy)
	}
	url := natstest.StartNode(t)
	for _, tc := range []struct {
		opts    []events.Option
		batches bool
		why     string
	}{
		{nil, false, "a one-replica stream on a server whose fsync policy fledger cannot see (--atomic-batches on if it fsyncs every write)"},
		{[]events.Option{events.WithAtomicBatches(events.BatchesOn)}, true, "atomic batches on"},
	} {
		st, err := events.Open(testutil.Context(t), append([]events.Option{events.WithURL(url)}, tc.opts...)...)
		testutil.NoError(t, err)
		g := events.GroupCommitStats(st)
		_ = st.Close()
		if g.AtomicBatches != tc.batches || g.BatchesWhy != tc.why {
			t.Errorf("another server %v: %v %q, want %v %q", tc.opts, g.AtomicBatches, g.BatchesWhy, tc.batches, tc.why)
		}
	}
}
