package events

import (
	"context"
	"fmt"
	"testing"
)

// Where group commit sends atomic batches: where they pay (the embedded
// server fsyncing every write, reached in process or through its
// listener; a replicated stream), pipelined elsewhere, unless told.
func TestChooseBatches(t *testing.T) {
	external := batchServer{allowAtomic: true, replicas: 1, serverName: "nats-1"}
	embedded := batchServer{allowAtomic: true, replicas: 1, embedded: true, syncAlways: true, serverName: EmbeddedServerName}
	with := func(s batchServer, f func(*batchServer)) batchServer { f(&s); return s }
	cases := []struct {
		name    string
		mode    AtomicBatches
		srv     batchServer
		batches bool
		why     string
	}{
		{"embedded, fsync every write", BatchesAuto, embedded, true, "the embedded server fsyncs every write"},
		{"embedded, fsync every interval", BatchesAuto, with(embedded, func(s *batchServer) { s.syncAlways = false }), false,
			"the embedded server does not fsync every write"},
		{"another process's embedded server, through its listener", BatchesAuto, with(external, func(s *batchServer) { s.serverName = EmbeddedServerName }), true,
			"fledger's embedded server (fsync every write) through its listener"},
		{"R3 cluster", BatchesAuto, with(external, func(s *batchServer) { s.replicas = 3 }), true, "a stream of 3 replicas"},
		{"R1 on another server", BatchesAuto, external, false,
			"a one-replica stream on a server whose fsync policy fledger cannot see (--atomic-batches on if it fsyncs every write)"},
		{"on, R1 on another server", BatchesOn, external, true, "atomic batches on"},
		{"off, embedded", BatchesOff, embedded, false, "atomic batches off"},
		{"on, stream without atomic publish", BatchesOn, with(external, func(s *batchServer) { s.allowAtomic = false }), false,
			"the stream was created without atomic batch publish"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			batches, why := chooseBatches(tc.mode, tc.srv)
			if batches != tc.batches || why != tc.why {
				t.Fatalf("got %v %q, want %v %q", batches, why, tc.batches, tc.why)
			}
		})
	}
}

func TestParseAtomicBatches(t *testing.T) {
	for in, want := range map[string]AtomicBatches{"auto": BatchesAuto, " ON ": BatchesOn, "off": BatchesOff} {
		if got, err := ParseAtomicBatches(in); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseAtomicBatches("yes"); err == nil || err.Error() != `"yes": want auto, on or off` {
		t.Errorf("yes: %v", err)
	}
	if _, err := Open(context.Background(), WithDataDir(t.TempDir()), WithAtomicBatches("batch")); err == nil ||
		err.Error() != `events: invalid option: atomic batches "batch": want auto, on or off` {
		t.Errorf("WithAtomicBatches(batch): %v", err)
	}
}

// A flush of groupBatchMin commits goes as one atomic batch on the
// embedded server that fsyncs every write, pipelined on one that does
// not, and as told by WithAtomicBatches; every member is stored and
// answered either way.
func TestGroupCommit_FlushWayFollowsTheServer(t *testing.T) {
	cases := []struct {
		name      string
		opts      []Option
		batches   uint64
		pipelined uint64
	}{
		{"fsync every write", nil, 1, 0},
		{"fsync every interval", []Option{WithSyncAlways(false, 0)}, 0, 1},
		{"fsync every interval, batches on", []Option{WithSyncAlways(false, 0), WithAtomicBatches(BatchesOn)}, 1, 0},
		{"fsync every write, batches off", []Option{WithAtomicBatches(BatchesOff)}, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(context.Background(), append([]Option{WithDataDir(t.TempDir())}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			s := st.(*store)
			c := s.group
			c.close() // drive the flush by hand, with the committer's own code
			flushByHand(t, s, c, groupBatchMin)
			g := c.stats()
			if g.Batches != tc.batches || g.Pipelined != tc.pipelined {
				t.Fatalf("batches %d pipelined %d, want %d %d (%s)", g.Batches, g.Pipelined, tc.batches, tc.pipelined, g.BatchesWhy)
			}
			s.group = nil // closed above
		})
	}
}

// A committer that pipelines what would have been a batch says so at
// each such flush (open.go logs the choice once from it); smaller
// flushes, and a committer sending batches, do not.
func TestGroupCommit_PipelinedBatchNoticed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batches bool
		size    int
		want    int
	}{
		{"pipelined, a flush of groupBatchMin", false, groupBatchMin, 1},
		{"pipelined, a smaller flush", false, groupBatchMin - 1, 0},
		{"batches", true, groupBatchMin, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Open(context.Background(), WithDataDir(t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			s := st.(*store)
			noticed := 0
			c := newCommitter(s.js, s.attemptTimeout(), tc.batches, "test", func() { noticed++ })
			c.close() // driven by hand
			flushByHand(t, s, c, tc.size)
			if noticed != tc.want {
				t.Fatalf("noticed %d times, want %d", noticed, tc.want)
			}
		})
	}
}

// flushByHand flushes n one-event commits (turns t0…) through c's own
// flush and checks each is stored, in order, from sequence 1.
func flushByHand(t *testing.T, s *store, c *committer, n int) {
	t.Helper()
	group := make([]*pendingPub, n)
	for i := range group {
		group[i] = turnMsg(t, s, fmt.Sprintf("t%d", i), 0)
	}
	c.flush(group)
	for i, p := range group {
		r := <-p.done
		if r.err != nil || r.ack == nil || r.ack.Sequence != uint64(i+1) {
			t.Fatalf("member %d: %+v %v, want stored at %d", i, r.ack, r.err, i+1)
		}
	}
}
