package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/events"
)

// TestRunSmoke runs every measurement once with tiny sizes (no timing
// assertions) and checks the report's shape and both renderings.
func TestRunSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Options{TempDir: t.TempDir(), sizes: &sizes{syncPub: 200, asyncPub: 500, syncPubFsync: 20,
		asyncPubFsync: 20, fsyncs: 10, upserts: 2_000, classifyRounds: 1, attemptsFsync: 30, attempts: 60,
		events: 3_000, stateN: []int{200, 1_000}, stepTime: 5 * time.Millisecond, levelTime: 50 * time.Millisecond, engineLevels: []int{1}, httpLevels: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Limits) != 8 {
		t.Errorf("%d limits, want 8", len(rep.Limits))
	}
	bars := 0
	for _, r := range rep.Rows {
		// A small rebuild may leave the live heap where it was.
		if r.Figure.Unit == "" || r.Figure.Value < 0 || r.Figure.Value == 0 && r.Figure.Unit != "MiB" {
			t.Errorf("row %q: value %v unit %q", r.Figure.Name, r.Figure.Value, r.Figure.Unit)
		}
		if r.Bar != "" {
			bars++
			if r.Status != "PASS" && r.Status != "MISS" {
				t.Errorf("row %q: status %q", r.Figure.Name, r.Status)
			}
		}
	}
	if bars != 5 {
		t.Errorf("%d rows with a bar, want 5 (classify, decide p99, rebuild, heap growth, start-up from snapshot; the sweep's bars need levels 16 and 64)", bars)
	}
	if rep.Concurrency == nil || len(rep.Concurrency.Levels) != 2 || len(rep.Concurrency.Raw) != 1 {
		t.Errorf("concurrency sweep: %+v", rep.Concurrency)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LIMIT", "FLEDGER", "rebuild (projections CatchUp)", "heap growth, rebuild of", "decide+append p99, fsync always", "engine start-up (ready to decide)", "µs", "CONCURRENCY SWEEP"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != len(rep.Rows) {
		t.Fatalf("JSON round trip: %v (%d rows)", err, len(back.Rows))
	}
}

func TestLoadVectors(t *testing.T) {
	dir, err := findFixtures("")
	if err != nil {
		t.Fatal(err)
	}
	vs, err := loadVectors(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 300 {
		t.Fatalf("%d vectors, want every fixture (>= 300)", len(vs))
	}
}

func TestPctAndNum(t *testing.T) {
	d := make([]time.Duration, 100)
	for i := range d {
		d[i] = time.Duration(i + 1)
	}
	if pct(d, 50) != 50 || pct(d, 99) != 99 || pct(d, 100) != 100 || pct(nil, 50) != 0 {
		t.Errorf("pct: %v %v %v", pct(d, 50), pct(d, 99), pct(d, 100))
	}
	for v, want := range map[float64]string{5.25: "5.2", 123: "123", 1234567: "1,234,567", 100000: "100,000"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// ---- Go benchmarks of the hot paths `fledger bench` measures ----

// BenchmarkStepDecision measures one OnOutcome(429) decision with 1, 10
// and 100 profiles per provider (cost growth with profiles).
func BenchmarkStepDecision(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("profiles=%d", k), func(b *testing.B) {
			h, err := newStepHarness(k)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := h.decide(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClassifyFixtures classifies every fixture vector once per op.
func BenchmarkClassifyFixtures(b *testing.B) {
	dir, err := findFixtures("")
	if err != nil {
		b.Fatal(err)
	}
	vs, err := loadVectors(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range vs {
			classify.ClassifyAt(v.in, v.now)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(vs)), "ns/error")
}

// BenchmarkGenerate measures the stream generator (deciders + encoding),
// one op = one commit, without publishing.
func BenchmarkGenerate(b *testing.B) {
	l, err := loadConfig(3)
	if err != nil {
		b.Fatal(err)
	}
	g, err := newGenerator(events.NewCatalogRegistry(), l, "gen", 1, func(string, string, []byte) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := g.step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.Events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecideAppend drives the engine with the realistic mix on the
// embedded server; one op is one attempt. Reports per-decision p50/p99.
func BenchmarkDecideAppend(b *testing.B) {
	for _, always := range []bool{true, false} {
		b.Run(fmt.Sprintf("fsync-always=%v", always), func(b *testing.B) {
			st, err := events.Open(context.Background(), events.WithDataDir(b.TempDir()), events.WithSyncAlways(always, 0))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			b.ResetTimer()
			r, err := runDecide(context.Background(), st, "bench", b.N, nil)
			if err != nil {
				b.Fatal(err)
			}
			d := sortedCopy(r.Decision)
			b.ReportMetric(us(pct(d, 50)), "decision-p50-µs")
			b.ReportMetric(us(pct(d, 99)), "decision-p99-µs")
			b.ReportMetric(float64(r.Attempts)/r.Elapsed.Seconds(), "attempts/s")
		})
	}
}

// rebuildStream is one generated stream shared by BenchmarkRebuild's
// sub-benchmarks ($FLEDGER_BENCH_EVENTS events, default 50 000).
var rebuildStream struct {
	once sync.Once
	st   events.Store
	fr   fillResult
	dir  string
	err  error
}

func stream(b *testing.B) (events.Store, fillResult) {
	rebuildStream.once.Do(func() {
		n := 50_000
		if v, err := strconv.Atoi(os.Getenv("FLEDGER_BENCH_EVENTS")); err == nil && v > 0 {
			n = v
		}
		dir, err := os.MkdirTemp("", "fledger-bench-")
		if err != nil {
			rebuildStream.err = err
			return
		}
		rebuildStream.dir = dir
		st, err := events.Open(context.Background(), events.WithDataDir(dir), events.WithSyncAlways(false, 0))
		if err != nil {
			rebuildStream.err = err
			return
		}
		rebuildStream.st = st
		rebuildStream.fr, rebuildStream.err = fill(context.Background(), st, n)
	})
	if rebuildStream.err != nil {
		b.Fatal(rebuildStream.err)
	}
	return rebuildStream.st, rebuildStream.fr
}

// BenchmarkRebuild measures, on one generated stream, the raw ordered
// read (bytes only, and with the events package's decode) and the
// projection rebuild with its live-heap growth;
// one op is the whole stream, reported as events/s.
func BenchmarkRebuild(b *testing.B) {
	ctx := context.Background()
	b.Run("raw-read", func(b *testing.B) {
		st, fr := stream(b)
		c0 := processCPU()
		for b.Loop() {
			if _, _, err := rawRead(ctx, st, fr.LastSeq); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, processCPU()-c0, fr.Events)
		b.ReportMetric(float64(fr.Events*b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("raw-read-decode", func(b *testing.B) {
		st, fr := stream(b)
		for b.Loop() {
			if _, _, err := rawDecode(ctx, st, fr.LastSeq); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(fr.Events*b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("rebuild", func(b *testing.B) {
		st, fr := stream(b)
		var growth uint64
		c0 := processCPU()
		for b.Loop() {
			r, err := rebuild(ctx, st, b.TempDir(), fr.LastSeq)
			if err != nil {
				b.Fatal(err)
			}
			growth = max(growth, r.Growth())
		}
		reportCPU(b, processCPU()-c0, fr.Events)
		b.ReportMetric(float64(fr.Events*b.N)/b.Elapsed().Seconds(), "events/s")
		b.ReportMetric(float64(growth)/(1<<20), "heap-growth-MiB")
	})
}

// reportCPU reports the process CPU per event of b's ops, each over
// events events: on a shared machine a steadier figure than events/s.
func reportCPU(b *testing.B, cpu time.Duration, events int) {
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*events), "cpu-µs/event")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if rebuildStream.st != nil {
		_ = rebuildStream.st.Close()
	}
	if rebuildStream.dir != "" {
		_ = os.RemoveAll(rebuildStream.dir)
	}
	os.Exit(code)
}
