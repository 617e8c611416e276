package engine

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// BenchmarkEngineAttempt measures the engine's overhead per attempt on the
// embedded server with fsync on every write (the default): one op is one
// turn of one successful attempt, i.e. two decisions — TurnStarted with
// AttemptStarted, then AttemptSucceeded with ProfileSucceeded, the auto
// pin and TurnSucceeded — each decided, durably appended (guarded) and
// folded back into the engine's state. The provider call itself is free.
// commit-p50/p99-µs are per decision (decide + append + fold).
// The sync=interval variant (fsync every 2 min) isolates the engine's own
// cost from the disk's.
func BenchmarkEngineAttempt(b *testing.B) {
	for _, always := range []bool{true, false} {
		name := "sync=always"
		if !always {
			name = "sync=interval"
		}
		b.Run(name, func(b *testing.B) { benchAttempt(b, always) })
	}
}

func benchAttempt(b *testing.B, syncAlways bool) {
	st := testutil.Store(b, events.WithSyncAlways(syncAlways, 0))
	e := newEngine(b, st, RealClock{})
	var lat []time.Duration
	e.observe = func(d time.Duration) { lat = append(lat, d) }
	ok := CallerFunc(func(context.Context, CallRequest) (Answer, error) { return Answer{}, nil })
	ctx := context.Background()
	// Warm up (first turn pins the profile).
	if _, err := e.RunTurn(ctx, TurnRequest{Session: "bench"}, ok); err != nil {
		b.Fatal(err)
	}
	lat = lat[:0]
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprint("b", i), Session: "bench"}, ok); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if n := len(lat); n > 0 {
		b.ReportMetric(float64(lat[n/2].Microseconds()), "commit-p50-µs")
		b.ReportMetric(float64(lat[min(n-1, n*99/100)].Microseconds()), "commit-p99-µs")
	}
}
