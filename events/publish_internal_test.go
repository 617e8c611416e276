package events

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var groupT0 = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

func openGroupStore(t *testing.T) *store {
	t.Helper()
	st, err := Open(context.Background(), WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st.(*store)
}

// turnMsg is a one-event commit on turn id's subject expecting expected.
func turnMsg(t *testing.T, s *store, id string, expected uint64) *pendingPub {
	t.Helper()
	subj := MustSubject("main", AggTurn, id)
	ev := New("main", id, groupT0, TurnSucceeded{TurnID: id, Attempts: 1})
	msg, _, err := s.commitMsg(AppendRequest{Subject: subj, Guard: subj, Expected: expected, Events: []Event{ev}})
	if err != nil {
		t.Fatal(err)
	}
	return newPending(msg)
}

// A flush of batchMin or more messages is one atomic batch; when one
// member's expectation fails on a write the store does not know of, the
// whole batch is refused by the server and each member is re-sent alone:
// only that member fails, every other one is stored where its ack says.
// A member guarding a subject an earlier member writes waits for the next
// flush and is answered with the conflict there, without a refused batch.
func TestGroupCommit_FlushAnswersEachMember(t *testing.T) {
	cases := []struct {
		name                                string
		bad, sameSubject, knownBad          bool
		wantBatches, wantFallbacks, wantBad int
	}{
		{name: "all valid: one batch", wantBatches: 1},
		{name: "one stale expectation: refused, re-sent one by one", bad: true, wantFallbacks: 1, wantBad: 1},
		{name: "two on one subject: the second held back, then stale", sameSubject: true, wantBatches: 1, wantBad: 1},
		{name: "a stale expectation on a write this store made: answered at once", bad: true, knownBad: true, wantBatches: 1, wantBad: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openGroupStore(t)
			ctx := context.Background()
			// x already holds one message: expecting 0 on it is stale.
			x := MustSubject("main", AggTurn, "x")
			if _, err := s.Append(ctx, x, 0, New("main", "x", groupT0, TurnSucceeded{TurnID: "x", Attempts: 1})); err != nil {
				t.Fatal(err)
			}
			c := s.group
			if !tc.knownBad { // x's write was another writer's: unknown here
				c.mu.Lock()
				c.known = map[string]uint64{}
				c.mu.Unlock()
			}
			c.close() // drive flushes by hand, with the committer's own code
			s.group = nil
			var group []*pendingPub
			for i := range 10 {
				group = append(group, turnMsg(t, s, fmt.Sprintf("t%d", i), 0))
			}
			if tc.bad {
				group[4] = turnMsg(t, s, "x", 0)
			}
			if tc.sameSubject {
				group[6] = turnMsg(t, s, "t2", 0)
			}
			// Triaged and flushed as the committer's loop does: what
			// take holds back goes in the next flush.
			c.queue = append([]*pendingPub(nil), group...)
			for range 3 {
				if g := c.take(); len(g) > 0 {
					c.flush(g)
				}
			}
			bad := 0
			for i, p := range group {
				r := <-p.done
				var apiErr *jetstream.APIError
				if r.err != nil {
					if !errors.As(r.err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
						t.Fatalf("member %d: %v", i, r.err)
					}
					bad++
					continue
				}
				m, err := s.stream.GetMsg(ctx, r.ack.Sequence)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := m.Header.Get(jetstream.MsgIDHeader), p.msg.Header.Get(jetstream.MsgIDHeader); got != want {
					t.Fatalf("member %d acked at seq %d, which holds %s, not %s", i, r.ack.Sequence, got, want)
				}
			}
			st := c.stats()
			if bad != tc.wantBad || st.Batches != uint64(tc.wantBatches) || st.Fallbacks != uint64(tc.wantFallbacks) {
				t.Fatalf("bad %d, stats %+v; want bad %d, %d batches, %d fallbacks", bad, st, tc.wantBad, tc.wantBatches, tc.wantFallbacks)
			}
		})
	}
}

// A duplicate's ack names the stored original's sequence, which may be on
// another subject (two writers of one turn step store under different
// subjects): it must not become the committer's last known sequence of
// this message's subject, or every later expectation on it would be
// answered stale forever.
func TestGroupCommit_DuplicateAckDoesNotMoveKnown(t *testing.T) {
	s := openGroupStore(t)
	c := s.group
	p := turnMsg(t, s, "t1", 0)
	c.mu.Lock()
	c.inflight[p.msg.Subject]++
	c.mu.Unlock()
	c.answer(p, pubResult{ack: &jetstream.PubAck{Stream: StreamName, Sequence: 99, Duplicate: true}})
	c.mu.Lock()
	defer c.mu.Unlock()
	if got := c.known[p.msg.Subject]; got != 0 {
		t.Fatalf("known %d after a duplicate ack, want 0", got)
	}
	if c.inflight[p.msg.Subject] != 0 {
		t.Fatalf("still in flight: %d", c.inflight[p.msg.Subject])
	}
}

// TestGroupCommit_KnownIsBoundedRing: past knownMax written subjects the
// oldest is forgotten, one per append, and the newest stay known.
func TestGroupCommit_KnownIsBoundedRing(t *testing.T) {
	c := &committer{known: map[string]uint64{}, inflight: map[string]int{}}
	const n = knownMax + 10
	for i := 1; i <= n; i++ {
		p := &pendingPub{msg: &nats.Msg{Subject: fmt.Sprintf("fledger.main.turn.t%d", i)}}
		c.inflight[p.msg.Subject]++
		c.answeredLocked(p, &jetstream.PubAck{Stream: StreamName, Sequence: uint64(i)})
	}
	if len(c.known) != knownMax || len(c.knownOrder) != knownMax {
		t.Fatalf("known %d, order %d, want %d each", len(c.known), len(c.knownOrder), knownMax)
	}
	for _, tc := range []struct {
		i    int
		want uint64
	}{{1, 0}, {10, 0}, {11, 11}, {n, n}} {
		if got := c.known[fmt.Sprintf("fledger.main.turn.t%d", tc.i)]; got != tc.want {
			t.Errorf("known t%d = %d, want %d", tc.i, got, tc.want)
		}
	}
	if c.knownNext != 10 {
		t.Errorf("knownNext %d, want 10", c.knownNext)
	}
}
