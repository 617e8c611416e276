package engine

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// BenchmarkEngineStateSize measures what an engine's state holds per
// session and per open turn — the state that grows with them and is not
// evicted (docs/operations.md "Memory that grows with sessions"). The
// stream is written by a real engine: sessions=N is N sessions, each with
// one finished turn of one successful attempt (so each holds the auto pin
// that turn wrote); open-turns=N is N turns begun (TurnStarted and the
// first AttemptStarted) on 16 sessions and never reported on, as a
// gateway that crashed mid-turn leaves them. One op starts a new engine
// from sequence 1 (no snapshot) keeping one finished turn, so ns/op is
// that start-up; heap-B is the live heap after a GC with it open minus
// after it is closed, snapshot-B the size of the snapshot it would save,
// each minus the same for the stream's config alone and divided by N.
func BenchmarkEngineStateSize(b *testing.B) {
	for _, c := range []struct {
		open bool
		n    int
	}{{false, 1_000}, {false, 10_000}, {true, 1_000}, {true, 10_000}} {
		name := fmt.Sprintf("sessions=%d", c.n)
		if c.open {
			name = fmt.Sprintf("open-turns=%d", c.n)
		}
		b.Run(name, func(b *testing.B) { benchStateSize(b, c.open, c.n) })
	}
}

func benchStateSize(b *testing.B, open bool, n int) {
	st := testutil.Store(b, events.WithSyncAlways(false, 0))
	// The writer keeps every turn: it never looks an id up in the store.
	w := newEngine(b, st, RealClock{}, WithSnapshotEvery(0), WithFinishedTurns(n+1))
	ctx := context.Background()
	baseHeap, baseSnap, _, _ := engineStateSize(b, st)
	ok := CallerFunc(func(context.Context, CallRequest) (Answer, error) { return Answer{}, nil })
	for i := range n {
		req := TurnRequest{TurnID: fmt.Sprintf("t-%07d", i), Session: fmt.Sprintf("agent:main:telegram:direct:%d", i)}
		var err error
		if open {
			req.Session = fmt.Sprintf("agent:main:telegram:direct:%d", i%16)
			_, err = w.BeginTurn(ctx, req)
		} else {
			_, err = w.RunTurn(ctx, req, ok)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	var (
		heap            int64
		snap            int
		locked, encoded time.Duration
	)
	b.ResetTimer()
	for range b.N {
		heap, snap, locked, encoded = engineStateSize(b, st)
	}
	unit := "session"
	if open {
		unit = "open-turn"
	}
	b.ReportMetric(float64(heap-baseHeap)/float64(n), "heap-B/"+unit)
	b.ReportMetric(float64(snap-baseSnap)/float64(n), "snapshot-B/"+unit)
	// A snapshot holds the state's read lock (and so the fold, and the
	// decisions queued behind it) only while it copies the state
	// (capture); it encodes outside.
	b.ReportMetric(float64(locked.Microseconds())/1e3, "snapshot-lock-ms")
	b.ReportMetric(float64(encoded.Microseconds())/1e3, "snapshot-encode-ms")
}

// engineStateSize starts an engine on st from sequence 1 (timed) and
// returns, untimed, the live heap it holds, its snapshot's size, and how
// long taking the snapshot held the state's lock and then encoded.
func engineStateSize(b *testing.B, st events.Store) (heap int64, snap int, locked, encoded time.Duration) {
	e, err := New(context.Background(), st, "main", WithSnapshotEvery(0), WithFinishedTurns(1))
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	defer b.StartTimer()
	start := time.Now()
	e.st.mu.RLock()
	c := e.st.capture()
	e.st.mu.RUnlock()
	locked = time.Since(start)
	sn, _, err := c.snapshot(events.Ledger{})
	if err != nil {
		b.Fatal(err)
	}
	encoded = time.Since(start) - locked
	n := len(sn)
	sn = nil // the snapshot's bytes are not the state's
	with := liveHeap()
	e.Close()
	e = nil // the state is garbage now: what it held is the difference
	return int64(with) - int64(liveHeap()), n, locked, encoded
}

// liveHeap collects garbage twice (a sync.Pool's victim cache, such as
// encoding/json's buffer holding the last snapshot, survives one) and
// returns the live heap.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
