package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// chainAppends runs writers goroutines, each appending n commits to its own
// turn subject with the exact expectation of the previous one, all at
// once, and checks every append was stored where its ack says, in order.
func chainAppends(t *testing.T, s events.Store, writers, n int) {
	t.Helper()
	ctx := testutil.Context(t)
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("w%d", w)
			subj := events.MustSubject("main", events.AggTurn, id)
			var last uint64
			for i := range n {
				ev := events.New("main", id, t0, events.TurnSucceeded{TurnID: id, Attempts: i + 1})
				res, err := s.AppendCommit(ctx, events.AppendRequest{Subject: subj, Expected: last, Basis: last, Events: []events.Event{ev}})
				if err != nil {
					errc <- fmt.Errorf("writer %d append %d: %w", w, i, err)
					return
				}
				if res.Duplicate || res.Seq <= last || len(res.Events) != 1 || res.Events[0].ID != ev.ID || res.Events[0].Basis != last {
					errc <- fmt.Errorf("writer %d append %d: result %+v after %d", w, i, res, last)
					return
				}
				last = res.Seq
			}
			evs, _, err := s.ReadSubject(ctx, subj)
			if err != nil || len(evs) != n {
				errc <- fmt.Errorf("writer %d: read back %d events, %v", w, len(evs), err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// Concurrent appends through the group committer: each gets its exact
// result and the flushes that carried them add up.
func TestGroupCommit_ConcurrentAppendsExact(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	chainAppends(t, s, 64, 10)
	st := events.GroupCommitStats(s)
	if st.Single+st.BatchedMsgs == 0 || st.Single+st.Pipelined+st.Batches == 0 {
		t.Fatalf("no flush counted: %+v", st)
	}
	t.Logf("group commit: %+v", st)
}

// A stream created without atomic publish (by an earlier fledger) is
// still written correctly, with pipelined flushes only.
func TestGroupCommit_StreamWithoutAtomicPublish(t *testing.T) {
	dir := t.TempDir()
	s, err := events.Open(context.Background(), events.WithDataDir(dir), events.WithListen(0))
	testutil.NoError(t, err)
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo(events.WriterUser, listenerPassword(t, dir, events.WriterCredentialsFile)))
	testutil.NoError(t, err)
	js, _ := jetstream.New(nc)
	str, err := js.Stream(testutil.Context(t), events.StreamName)
	testutil.NoError(t, err)
	cfg := str.CachedInfo().Config
	cfg.AllowAtomicPublish = false
	_, err = js.UpdateStream(testutil.Context(t), cfg)
	testutil.NoError(t, err)
	nc.Close()
	testutil.NoError(t, s.Close())

	s2, err := events.Open(context.Background(), events.WithDataDir(dir))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	chainAppends(t, s2, 32, 5)
	if st := events.GroupCommitStats(s2); st.Batches != 0 || st.AtomicBatches || st.BatchesWhy != "the stream was created without atomic batch publish" {
		t.Fatalf("batches on a stream without atomic publish: %+v", st)
	}
}
