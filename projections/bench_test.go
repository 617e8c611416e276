package projections_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/sqlitedb"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// benchStream is one generated stream shared by every sub-benchmark of
// BenchmarkRebuild, so the raw rates and the rebuild rate are measured on
// the same data in the same run.
var benchStream struct {
	once sync.Once
	st   events.Store
	g    *gen
	err  error
}

// benchEvents is the stream size: $FLEDGER_BENCH_EVENTS, default 100 000.
func benchEvents() int {
	if n, err := strconv.Atoi(os.Getenv("FLEDGER_BENCH_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

func stream(b *testing.B) (events.Store, *gen) {
	benchStream.once.Do(func() {
		dir, err := os.MkdirTemp("", "fledger-bench-")
		if err != nil {
			benchStream.err = err
			return
		}
		st, err := events.Open(context.Background(), events.WithDataDir(dir), events.WithSyncAlways(false, time.Minute), events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
		if err != nil {
			benchStream.err = err
			return
		}
		start := time.Now()
		benchStream.st, benchStream.g = st, generate(b, st, benchEvents())
		b.Logf("generated %d events in %d commits in %v", benchStream.g.events, benchStream.g.commits, time.Since(start).Round(time.Millisecond))
	})
	if benchStream.err != nil {
		b.Fatal(benchStream.err)
	}
	return benchStream.st, benchStream.g
}

func report(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

// cpuNow is the process's CPU time (user + system).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawReadBench reads the generated stream with an ordered consumer, bytes
// only, pulling with opts; it reports events/s and process CPU per event.
func rawReadBench(b *testing.B, opts ...jetstream.PullMessagesOpt) {
	st, g := stream(b)
	ctx := context.Background()
	js, err := jetstream.New(natstest.DialWriter(b, st))
	testutil.NoError(b, err)
	cpu0 := cpuNow()
	b.ResetTimer()
	for range b.N {
		s, err := js.Stream(ctx, events.StreamName)
		testutil.NoError(b, err)
		c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		testutil.NoError(b, err)
		it, err := c.Messages(opts...)
		testutil.NoError(b, err)
		var n uint64
		for n < g.lastSeq {
			m, err := it.Next()
			testutil.NoError(b, err)
			if len(m.Data()) == 0 {
				b.Fatal("empty message")
			}
			n++
		}
		it.Stop()
	}
	b.ReportMetric(float64((cpuNow()-cpu0).Nanoseconds())/1e3/float64(g.events*b.N), "cpu-µs/event")
	report(b, g.events)
}

// BenchmarkRebuild measures, on one generated stream (default 100k
// events): the raw undecoded ordered read of the stream (JetStream ordered
// consumer, bytes only), the store's decoded Read and ReadRange (what the
// projector reads with), a raw SQLite batched upsert of as many rows as
// there are events (1000 rows per transaction, prepared, 15 columns like
// usage_stats), the raw pipeline that chains the two with a plain
// encoding/json decode (see rawPipeline: the earlier baseline; `fledger
// bench` now compares the rebuild with the raw ordered read), and the full
// projection rebuild into a fresh database. Each reports events/s; one op is the whole stream.
func BenchmarkRebuild(b *testing.B) {
	// The store's reads pull 1000 messages at a time (events' readBatch);
	// the default pull (500) is there to show what that setting is worth.
	b.Run("raw-read", func(b *testing.B) { rawReadBench(b, jetstream.PullMaxMessages(1000)) })
	b.Run("raw-read-default-pull", func(b *testing.B) { rawReadBench(b) })
	b.Run("store-read-decoded", func(b *testing.B) {
		st, g := stream(b)
		b.ResetTimer()
		for range b.N {
			n := 0
			for _, err := range st.Read(context.Background(), 1) {
				testutil.NoError(b, err)
				n++
			}
			if n != g.events {
				b.Fatalf("read %d events, want %d", n, g.events)
			}
		}
		report(b, g.events)
	})
	b.Run("store-readrange-decoded", func(b *testing.B) {
		st, g := stream(b)
		rs := st.(projections.RangeSource)
		b.ResetTimer()
		for range b.N {
			n := 0
			for _, err := range rs.ReadRange(context.Background(), 1, 0) {
				testutil.NoError(b, err)
				n++
			}
			if n != g.events {
				b.Fatalf("read %d events, want %d", n, g.events)
			}
		}
		report(b, g.events)
	})
	b.Run("raw-upsert", func(b *testing.B) {
		_, g := stream(b)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			db := rawTable(b)
			b.StartTimer()
			rawUpsert(b, db, g.events)
			b.StopTimer()
			testutil.NoError(b, db.Close())
			b.StartTimer()
		}
		report(b, g.events)
	})
	b.Run("raw-pipeline", func(b *testing.B) {
		st, g := stream(b)
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			db := rawTable(b)
			b.StartTimer()
			rawPipeline(b, st, db, g)
			b.StopTimer()
			testutil.NoError(b, db.Close())
			b.StartTimer()
		}
		report(b, g.events)
	})
	b.Run("rebuild", func(b *testing.B) {
		st, g := stream(b)
		b.ResetTimer()
		benchCatchUps(b, st, g)
	})
}

// benchCatchUps rebuilds src (g's stream) into a fresh database b.N
// times and reports events/s and the process CPU per event.
func benchCatchUps(b *testing.B, src projections.Source, g *gen) {
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		db, err := projections.Open(context.Background(), filepath.Join(b.TempDir(), "p.sqlite"))
		testutil.NoError(b, err)
		b.StartTimer()
		c0 := cpuNow()
		res, err := projections.NewProjector(db).CatchUp(context.Background(), src, g.lastSeq)
		cpu += cpuNow() - c0
		testutil.NoError(b, err)
		if res.Events != g.events {
			b.Fatalf("folded %d events, want %d", res.Events, g.events)
		}
		b.StopTimer()
		testutil.NoError(b, db.Close())
		b.StartTimer()
	}
	report(b, g.events)
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*g.events), "cpu-µs/event")
}

// memSource replays events decoded beforehand: the projector's own cost
// (fold and SQLite writer) without the stream's read and decode.
type memSource []events.Event

func (m memSource) Read(_ context.Context, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for _, ev := range m {
			if ev.Seq >= from && !yield(ev, nil) {
				return
			}
		}
	}
}

// BenchmarkProjector measures the projector alone: a rebuild of the
// generated stream (BenchmarkRebuild's) from events decoded beforehand
// and held in memory, so its figures (cpu-µs/event, allocs) are the fold's
// and the SQLite writer's, without the stream's read and decode. The
// generator's turn ids count up (sequential keys, like the UUIDv7 ids
// fledger and its TypeScript client make); random-turn-ids gives every
// turn a random UUIDv4-like id instead, as a gateway that sends its own
// random run ids does.
func BenchmarkProjector(b *testing.B) {
	st, g := stream(b)
	var mem memSource
	for ev, err := range st.Read(context.Background(), 1) {
		testutil.NoError(b, err)
		mem = append(mem, ev)
	}
	b.Run("sequential-turn-ids", func(b *testing.B) {
		b.ReportAllocs()
		benchCatchUps(b, mem, g)
	})
	b.Run("random-turn-ids", func(b *testing.B) {
		b.ReportAllocs()
		benchCatchUps(b, randomTurnIDs(mem), g)
	})
}

// randomTurnIDs is mem with every turn's key replaced by a random
// UUIDv4-like id (seeded: the same ids every run).
func randomTurnIDs(mem memSource) memSource {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := map[string]string{}
	out := make(memSource, len(mem))
	for i, ev := range mem {
		if ev.Aggregate == events.AggTurn {
			id, ok := ids[ev.Key]
			if !ok {
				id = fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rng.Uint32(), rng.Uint32N(1<<16), rng.Uint32N(1<<12),
					0x8000|rng.Uint32N(1<<14), rng.Uint64N(1<<48))
				ids[ev.Key] = id
			}
			ev.Key = id
		}
		out[i] = ev
	}
	return out
}

// rawTable opens a fresh database with the 15-column table of the raw
// sub-benchmarks and a one-row checkpoint table.
func rawTable(b *testing.B) *sql.DB {
	db, err := sqlitedb.Open(context.Background(), filepath.Join(b.TempDir(), "raw.sqlite"))
	testutil.NoError(b, err)
	_, err = db.Exec(`CREATE TABLE t (a TEXT NOT NULL, k TEXT NOT NULL, c1 TEXT, c2 INTEGER, c3 INTEGER, c4 INTEGER,
		c5 INTEGER, c6 TEXT, c7 INTEGER, c8 TEXT, c9 TEXT, c10 INTEGER, c11 TEXT, c12 INTEGER, c13 INTEGER,
		PRIMARY KEY (a, k)) WITHOUT ROWID;
		CREATE TABLE cp (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL);
		INSERT INTO cp VALUES (1, 0)`)
	testutil.NoError(b, err)
	return db
}

const upsertSQL = `INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (a, k) DO UPDATE SET c1 = excluded.c1, c2 = excluded.c2, c3 = excluded.c3, c4 = excluded.c4,
	c5 = excluded.c5, c6 = excluded.c6, c7 = excluded.c7, c8 = excluded.c8, c9 = excluded.c9,
	c10 = excluded.c10, c11 = excluded.c11, c12 = excluded.c12, c13 = excluded.c13`

// rawPipeline is the design's "pipeline" case (jetstream-sqlite-limits.md:
// ordered read → JSON decode → upsert + checkpoint per transaction of
// 1000) on the generated stream, without fledger: one goroutine reads the
// stream with a JetStream ordered consumer, decodes each message with
// encoding/json into an events.Commit (every byte scanned; payloads kept
// as raw JSON, not decoded into their Go types), and writes one prepared
// UPSERT per event (keyed by agent and aggregate key) plus a checkpoint
// row per transaction of 1000 events. It is the raw read+decode+upsert
// rate a rebuild is compared with.
func rawPipeline(b *testing.B, st events.Store, db *sql.DB, g *gen) {
	ctx := context.Background()
	js, err := jetstream.New(natstest.DialWriter(b, st))
	testutil.NoError(b, err)
	s, err := js.Stream(ctx, events.StreamName)
	testutil.NoError(b, err)
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	testutil.NoError(b, err)
	it, err := c.Messages(jetstream.PullMaxMessages(1000))
	testutil.NoError(b, err)
	defer it.Stop()
	up, err := db.PrepareContext(ctx, upsertSQL)
	testutil.NoError(b, err)
	defer up.Close()
	cp, err := db.PrepareContext(ctx, `UPDATE cp SET seq = ? WHERE id = 1`)
	testutil.NoError(b, err)
	defer cp.Close()
	var (
		tx      *sql.Tx
		ts      *sql.Stmt
		inTx, n int
		seq     uint64
	)
	commit := func() {
		_, err := tx.StmtContext(ctx, cp).ExecContext(ctx, seq)
		testutil.NoError(b, err)
		testutil.NoError(b, tx.Commit())
		tx, inTx = nil, 0
	}
	for seq < g.lastSeq {
		m, err := it.Next()
		testutil.NoError(b, err)
		meta, err := m.Metadata()
		testutil.NoError(b, err)
		seq = meta.Sequence.Stream
		var cm events.Commit
		testutil.NoError(b, json.Unmarshal(m.Data(), &cm))
		for i := range cm.Events {
			e := &cm.Events[i]
			if tx == nil {
				tx, err = db.BeginTx(ctx, nil)
				testutil.NoError(b, err)
				ts = tx.StmtContext(ctx, up)
			}
			_, err := ts.ExecContext(ctx, e.Agent, e.Key, e.Type, int64(seq), e.At.UnixMilli(), i, e.SchemaVersion,
				string(e.Aggregate), len(e.Payload), e.ID, e.CorrelationID, n%7, e.CausationID, int64(seq), n)
			testutil.NoError(b, err)
			n++
			if inTx++; inTx == 1000 {
				commit()
			}
		}
	}
	if tx != nil {
		commit()
	}
	if n != g.events {
		b.Fatalf("upserted %d events, want %d", n, g.events)
	}
}

// rawUpsert writes n rows over 1000 keys, 1000 rows per transaction, with
// a statement prepared once, plus a checkpoint-like update per
// transaction.
func rawUpsert(b *testing.B, db *sql.DB, n int) {
	ctx := context.Background()
	st, err := db.PrepareContext(ctx, upsertSQL)
	testutil.NoError(b, err)
	defer st.Close()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("provider:profile-%04d", i)
	}
	for i := 0; i < n; {
		tx, err := db.BeginTx(ctx, nil)
		testutil.NoError(b, err)
		ts := tx.StmtContext(ctx, st)
		for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
			_, err := ts.ExecContext(ctx, "main", keys[i%1000], "anthropic", t0+int64(i), t0, i%7, t0+int64(i),
				`{"rate_limit":2}`, t0+30_000, "rate_limit", "claude", 0, "", t0+int64(i), i)
			testutil.NoError(b, err)
		}
		testutil.NoError(b, tx.Commit())
	}
}
