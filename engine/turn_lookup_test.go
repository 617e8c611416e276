package engine

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// countingStore counts the reads of turn lookups: ReadSubject of a turn
// subject and Read. A turn subject read waits for subjectGate while it is
// set.
type countingStore struct {
	events.Store
	subjectGate        chan struct{}
	subjectReads, read atomic.Int64
}

func (c *countingStore) ReadSubject(ctx context.Context, filter string) ([]events.Event, uint64, error) {
	if strings.Contains(filter, ".turn.") {
		c.subjectReads.Add(1)
		if c.subjectGate != nil {
			<-c.subjectGate
		}
	}
	return c.Store.ReadSubject(ctx, filter)
}

func (c *countingStore) Read(ctx context.Context, from uint64) iter.Seq2[events.Event, error] {
	c.read.Add(1)
	return c.Store.Read(ctx, from)
}

// rangeStore is a countingStore with a ReadRange (Read bounded by to)
// that waits for rangeGate, counting the range reads running at once.
type rangeStore struct {
	countingStore
	rangeGate                 chan struct{}
	ranges, running, maxConcu atomic.Int64
}

func (r *rangeStore) ReadRange(ctx context.Context, from, to uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		r.ranges.Add(1)
		n := r.running.Add(1)
		defer r.running.Add(-1)
		for m := r.maxConcu.Load(); n > m && !r.maxConcu.CompareAndSwap(m, n); m = r.maxConcu.Load() {
		}
		<-r.rangeGate
		for ev, err := range r.Store.Read(ctx, from) {
			if err == nil && ev.Seq > to || !yield(ev, err) {
				return
			}
		}
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (l *turnLookups) waiting(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.flights[id]; f != nil {
		return f.waiters
	}
	return -1
}

// TestLookupTurn_KeptAndShared: eight concurrent lookups of one evicted
// turn make one subject read and one stream read; the turn's summary is
// then kept, so the step API's answers about it read nothing more, and
// equal those of an engine that holds the turn in memory. An unknown id
// is never kept; the kept turns are bounded, least recently used first
// out.
func TestLookupTurn_KeptAndShared(t *testing.T) {
	ctx, mem, clock := memFixture(t)
	cs := &countingStore{Store: mem}
	e := newEngine(t, cs, clock, WithFinishedTurns(1), WithSnapshotEvery(0))
	for i := range 4 {
		_, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: "s"}, script{"anthropic/claude-sonnet-4": rateLimit()})
		testutil.NoError(t, err)
	}
	full := newEngineNoConfig(t, mem, clock, WithFinishedTurns(1000), WithSnapshotEvery(0))
	testutil.NoError(t, full.Sync(ctx))
	want, _, err := full.LookupTurn(ctx, "t0")
	testutil.NoError(t, err)

	cs.subjectReads.Store(0)
	cs.read.Store(0)
	cs.subjectGate = make(chan struct{})
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			st, ok, err := e.LookupTurn(ctx, "t0")
			got[i] = fmt.Sprintf("%v %+v %v", ok, st, err)
		})
	}
	waitFor(t, "seven lookups waiting for the first", func() bool { return e.lookups.waiting("t0") == 7 })
	close(cs.subjectGate)
	wg.Wait()
	cs.subjectGate = nil
	for i, g := range got {
		if w := fmt.Sprintf("true %+v <nil>", want); g != w {
			t.Fatalf("lookup %d: %s, want %s", i, g, w)
		}
	}
	if s, r := cs.subjectReads.Load(), cs.read.Load(); s != 1 || r != 1 {
		t.Fatalf("8 concurrent lookups: %d subject reads, %d stream reads; want 1, 1", s, r)
	}

	answer := func(e *Engine, call string) string {
		switch call {
		case "lookup t0":
			st, ok, err := e.LookupTurn(ctx, "t0")
			return fmt.Sprintf("%v %+v %v", ok, st, err)
		case "current step t0", "current step t3", "current step t1":
			s, err := e.CurrentStep(ctx, strings.TrimPrefix(call, "current step "))
			if err != nil {
				return err.Error()
			}
			return fmt.Sprintf("%v %s", s.Replayed, norm(s.Next))
		case "duplicate outcome t0":
			s, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 1, Err: rateLimit()})
			if err != nil {
				return err.Error()
			}
			return fmt.Sprintf("%v %s", s.Replayed, norm(s.Next))
		case "mismatched outcome t0":
			_, err := e.ReportOutcome(ctx, "t0", AttemptReport{Attempt: 1, OK: true})
			return fmt.Sprint(err)
		case "current step nope":
			_, err := e.CurrentStep(ctx, "nope")
			return fmt.Sprint(err)
		}
		panic(call)
	}
	for _, tc := range []struct {
		call          string
		keep          int // the lookups' bound (0 = unchanged)
		subject, read int64
	}{
		{call: "lookup t0"},
		{call: "current step t0"},
		{call: "duplicate outcome t0"},
		{call: "mismatched outcome t0"},
		{call: "current step nope", subject: 1},
		{call: "current step nope", subject: 1},
		// t3 is finished and in memory: read once, then kept.
		{call: "current step t3", subject: 1, read: 1},
		{call: "current step t3"},
		// One kept turn: t1 pushes t3 (and t0) out.
		{call: "current step t1", keep: 1, subject: 1, read: 1},
		{call: "current step t3", subject: 1, read: 1},
		{call: "current step t1", subject: 1, read: 1},
	} {
		t.Run(tc.call, func(t *testing.T) {
			if tc.keep > 0 {
				e.lookups.mu.Lock()
				e.lookups.max = tc.keep
				e.lookups.mu.Unlock()
			}
			cs.subjectReads.Store(0)
			cs.read.Store(0)
			got := answer(e, tc.call)
			s, r := cs.subjectReads.Load(), cs.read.Load()
			if w := answer(full, tc.call); got != w || s != tc.subject || r != tc.read {
				t.Fatalf("%s after %d subject and %d stream reads, want %s after %d and %d", got, s, r, w, tc.subject, tc.read)
			}
		})
	}
}

// TestLookupTurn_BoundedReads: ten concurrent lookups of ten evicted
// turns on a store with ReadRange run at most four range reads at once
// (the others wait), each bounded by the engine's applied sequence, and
// all ten answer.
func TestLookupTurn_BoundedReads(t *testing.T) {
	ctx, mem, clock := memFixture(t)
	rs := &rangeStore{countingStore: countingStore{Store: mem}, rangeGate: make(chan struct{})}
	e := newEngine(t, rs, clock, WithFinishedTurns(1), WithSnapshotEvery(0))
	for i := range 11 {
		_, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: "s"}, script{})
		testutil.NoError(t, err)
	}
	rs.read.Store(0)
	rs.subjectReads.Store(0)
	var wg sync.WaitGroup
	var found atomic.Int64
	for i := range 10 {
		wg.Go(func() {
			if _, ok, err := e.LookupTurn(ctx, fmt.Sprintf("t%d", i)); ok && err == nil {
				found.Add(1)
			}
		})
	}
	waitFor(t, "ten subject reads and four range reads", func() bool {
		return rs.subjectReads.Load() == 10 && rs.running.Load() == maxStreamLookups
	})
	close(rs.rangeGate)
	wg.Wait()
	if got := fmt.Sprint(found.Load(), rs.ranges.Load(), rs.maxConcu.Load(), rs.read.Load()); got != "10 10 4 0" {
		t.Fatalf("found, range reads, most at once, direct reads = %s; want 10 10 4 0", got)
	}
}
