package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// BenchmarkPruneSessions measures session maintenance on a stream of
// sessions=N sessions, each with one finished turn (an auto pin), all
// idle for longer than the age: one op is a PruneSessions run pruning
// every one of them (N appends, DefaultPruneWorkers at once) on a fresh
// engine folded from sequence 1. sessions/s is the prune rate;
// held-B/session the live heap an engine folded from sequence 1 holds
// per session before the run minus after it (what pruning gives back;
// the embedded NATS server's own heap, which grows with every append,
// is not counted).
func BenchmarkPruneSessions(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { benchPrune(b, n) })
	}
}

func benchPrune(b *testing.B, n int) {
	ctx := context.Background()
	ok := CallerFunc(func(context.Context, CallRequest) (Answer, error) { return Answer{}, nil })
	var rate, freed float64
	for range b.N {
		b.StopTimer()
		st := testutil.Store(b, events.WithSyncAlways(false, 0))
		clock := testutil.NewManualClock(testutil.T0)
		w := newEngine(b, st, clock, WithSnapshotEvery(0), WithFinishedTurns(1))
		for i := range n {
			req := TurnRequest{TurnID: fmt.Sprintf("t-%07d", i), Session: fmt.Sprintf("agent:main:telegram:direct:%d", i)}
			if _, err := w.RunTurn(ctx, req, ok); err != nil {
				b.Fatal(err)
			}
		}
		clock.Advance(31 * 24 * time.Hour)
		before := foldHeap(b, st)
		b.StartTimer()
		start := time.Now()
		rep, err := w.PruneSessions(ctx, PruneOptions{After: 30 * 24 * time.Hour})
		took := time.Since(start)
		b.StopTimer()
		if err != nil || len(rep.Pruned) != n {
			b.Fatalf("pruned %d of %d: %v", len(rep.Pruned), n, err)
		}
		rep = nil
		after := foldHeap(b, st)
		rate += float64(n) / took.Seconds()
		freed += float64(before-after) / float64(n)
		w.Close()
		b.StartTimer()
	}
	b.ReportMetric(rate/float64(b.N), "sessions/s")
	b.ReportMetric(freed/float64(b.N), "held-B/session")
}

// foldHeap is the live heap an engine on st started from sequence 1 and
// synced holds: with it open minus after it is closed.
func foldHeap(b *testing.B, st events.Store) int64 {
	e, err := New(context.Background(), st, "main", WithSnapshotEvery(0), WithFinishedTurns(1))
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Sync(context.Background()); err != nil {
		b.Fatal(err)
	}
	with := liveHeap()
	e.Close()
	e = nil
	return int64(with) - int64(liveHeap())
}
