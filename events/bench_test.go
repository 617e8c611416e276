package events_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// Run: go test ./events -run '^$' -bench . -benchmem -benchtime 2s

func syncOpts(always bool) []events.Option {
	if always {
		return nil // the default
	}
	return []events.Option{events.WithSyncAlways(false, 0)}
}

func syncName(always bool) string {
	if always {
		return "sync=always"
	}
	return "sync=interval"
}

// reportLatency adds p50 and p99 (µs) of the samples as metrics.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// BenchmarkAppend measures the durable append latency of one decision:
// n events in one commit, with the expected last subject sequence, as the
// engine appends (one goroutine, wait for each ack).
func BenchmarkAppend(b *testing.B) {
	for _, always := range []bool{true, false} {
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/events=%d", syncName(always), n), func(b *testing.B) {
				s, _ := testutil.OpenStore(b, syncOpts(always)...)
				ctx := context.Background()
				ex := events.Examples()
				var last uint64
				lat := make([]time.Duration, 0, 1<<16)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					evs := make([]events.Event, n)
					for j := range evs {
						evs[j] = events.New("main", "openai:user@example.com", t0, ex[13+j%2]) // AttemptFailed, AttemptSucceeded
					}
					start := time.Now()
					res, err := s.Append(ctx, profileSubj, last, evs...)
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					last = res.Seq
					i++
				}
				b.ReportMetric(float64(i*n)/b.Elapsed().Seconds(), "events/s")
				reportLatency(b, lat)
			})
		}
	}
}

// BenchmarkAppendParallel measures append throughput with concurrent
// appenders, each guarding its own subject (no conflicts).
func BenchmarkAppendParallel(b *testing.B) {
	for _, always := range []bool{true, false} {
		b.Run(syncName(always)+"/events=1", func(b *testing.B) {
			s, _ := testutil.OpenStore(b, syncOpts(always)...)
			ctx := context.Background()
			var g atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4) // 8 appenders on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				key := fmt.Sprintf("openai:p%d@example.com", g.Add(1))
				subj := events.MustSubject("main", events.AggProfile, key)
				var last uint64
				for pb.Next() {
					ev := events.New("main", key, t0, events.ProfileCleared{ProfileID: key, By: "bench"})
					res, err := s.Append(ctx, subj, last, ev)
					if err != nil {
						b.Error(err)
						return
					}
					last = res.Seq
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRead measures reading and decoding the whole stream (the
// projection rebuild path); ns/op is per event.
func BenchmarkRead(b *testing.B) {
	s, _ := testutil.OpenStore(b, events.WithSyncAlways(false, 0))
	ctx := context.Background()
	const commits, per = 20000, 3
	ex := events.Examples()
	for i := range commits {
		evs := make([]events.Event, per)
		for j := range evs {
			evs[j] = events.New("main", fmt.Sprintf("turn-%d", i), t0, ex[12+j]) // AttemptStarted, AttemptFailed, AttemptSucceeded
		}
		if _, err := s.Append(ctx, events.MustSubject("main", events.AggTurn, fmt.Sprintf("turn-%d", i)), events.AnySeq, evs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		for _, err := range s.Read(ctx, 1) {
			if err != nil {
				b.Fatal(err)
			}
			if n++; n >= b.N {
				break
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCodec measures encoding and decoding a 3-event commit without
// the server.
func BenchmarkCodec(b *testing.B) {
	reg := events.NewCatalogRegistry()
	ex := events.Examples()
	evs := []events.Event{
		events.New("main", "turn-1", t0, ex[13]),
		events.New("main", "openai:user@example.com", t0, ex[1]),
		events.New("main", "turn-1", t0, ex[17]),
	}
	body, err := reg.EncodeCommit(evs)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := reg.EncodeCommit(evs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := reg.DecodeCommit(body, 1, "fledger.main.turn.turn-1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPublishBaseline is the floor under BenchmarkAppend: a plain
// JetStream publish of an already-encoded 1-event commit with the same
// headers (msg id, expected stream, expected last subject sequence) on the
// same store, without fledger's codec and checks.
func BenchmarkPublishBaseline(b *testing.B) {
	for _, always := range []bool{true, false} {
		b.Run(syncName(always)+"/events=1", func(b *testing.B) {
			s, _ := testutil.OpenStore(b, syncOpts(always)...)
			ctx := context.Background()
			js, err := jetstream.New(events.ConnOf(s))
			if err != nil {
				b.Fatal(err)
			}
			body, err := events.NewCatalogRegistry().EncodeCommit([]events.Event{events.New("main", "k", t0, events.Examples()[13])})
			if err != nil {
				b.Fatal(err)
			}
			var last uint64
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				m := &nats.Msg{Subject: profileSubj, Data: body, Header: nats.Header{}}
				m.Header.Set(jetstream.MsgIDHeader, strconv.Itoa(i))
				m.Header.Set(jetstream.ExpectedStreamHeader, events.StreamName)
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
				ack, err := js.PublishMsg(ctx, m)
				if err != nil {
					b.Fatal(err)
				}
				last = ack.Sequence
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
