package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// BenchmarkLookupEvictedTurn measures what GET /v1/turns/{id} asks of the
// engine for a finished turn evicted from memory (CurrentStep, then
// LookupTurn) on the embedded server, with 3,000 turns on the stream and
// 64 kept in memory:
//   - cold: each op a turn not looked up before (every read misses any
//     cache: the ids cycle over more turns than it holds);
//   - warm: the same old turn again;
//   - burst: 50 concurrent lookups of distinct old turns while a new turn
//     is begun and finished; begin-ms is that live turn's time.
func BenchmarkLookupEvictedTurn(b *testing.B) {
	const turns = 3000
	st := testutil.Store(b, events.WithSyncAlways(false, 0))
	e := newEngine(b, st, RealClock{}, WithFinishedTurns(64), WithSnapshotEvery(0))
	ctx := context.Background()
	ok := CallerFunc(func(context.Context, CallRequest) (Answer, error) { return Answer{}, nil })
	for i := range turns {
		if _, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprint("old", i), Session: fmt.Sprint("s", i%50)}, ok); err != nil {
			b.Fatal(err)
		}
	}
	old := turns - 64
	burst := 0
	var failed atomic.Int64
	get := func(id string) {
		if _, err := e.CurrentStep(ctx, id); err != nil {
			failed.Add(1)
			return
		}
		if _, found, err := e.LookupTurn(ctx, id); err != nil || !found {
			failed.Add(1)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for i := range b.N {
			get(fmt.Sprint("old", i%old))
		}
	})
	b.Run("warm", func(b *testing.B) {
		get("old7")
		b.ResetTimer()
		for range b.N {
			get("old7")
		}
	})
	b.Run("burst", func(b *testing.B) {
		var lat []time.Duration
		for range b.N {
			var wg sync.WaitGroup
			for range 50 {
				id := fmt.Sprint("old", (burst*7919)%old)
				burst++
				wg.Go(func() { get(id) })
			}
			t0 := time.Now()
			if _, err := e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprint("live", burst), Session: "live"}, ok); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			wg.Wait()
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "begin-p50-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "begin-max-ms")
	})
	b.ReportMetric(float64(failed.Load()), "failed-lookups")
}
