// Package bench is `fledger bench`: in one process, on fresh embedded
// servers in a temporary directory, it measures this machine's raw limits
// (JetStream publish and read, fsync, SQLite batched upsert, a raw
// read+decode+upsert pipeline) and then fledger's own figures
// (classification, decide-and-append, projection rebuild, peak heap) next
// to them, as ratios, because the machine is shared and noisy.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
)

// Options size a run.
type Options struct {
	// Quick runs the small sizes (about 30 s on 2 cores).
	Quick bool
	// Events is the rebuild stream size (0 = 1 000 000, Quick 100 000).
	Events int
	// Fixtures is the fixtures directory ("" = find fixtures/ above the
	// working directory).
	Fixtures string
	// TempDir is where the servers' data directories go ("" = os.TempDir).
	TempDir string
	// Progress, when set, gets one line per phase.
	Progress io.Writer
	// ConcurrencyOnly runs the concurrency sweep alone (no other limit or
	// figure); NoConcurrency leaves it out.
	ConcurrencyOnly, NoConcurrency bool
	// LevelTime is the concurrency sweep's wall time per level (0 = 2 s,
	// Quick 0.5 s).
	LevelTime time.Duration

	// sizes overrides every size (tests).
	sizes *sizes
}

// sizes are the per-phase sizes of a run.
type sizes struct {
	syncPub, asyncPub, syncPubFsync, asyncPubFsync, fsyncs int
	upserts, classifyRounds                                int
	attemptsFsync, attempts                                int
	events                                                 int
	stepTime                                               time.Duration
	// The concurrency sweep: wall time per level and the levels (nil =
	// sweepEngineLevels, sweepHTTPLevels).
	levelTime                time.Duration
	engineLevels, httpLevels []int
}

func sizesFor(o Options) sizes {
	if o.sizes != nil {
		s := *o.sizes
		if s.engineLevels == nil {
			s.engineLevels = sweepEngineLevels
		}
		if s.httpLevels == nil {
			s.httpLevels = sweepHTTPLevels
		}
		if s.levelTime <= 0 {
			s.levelTime = sweepQuickTime
		}
		return s
	}
	s := sizes{syncPub: 50_000, asyncPub: 300_000, syncPubFsync: 5_000, asyncPubFsync: 5_000, fsyncs: 2_000,
		upserts: 1_000_000, classifyRounds: 1_000, attemptsFsync: 5_000, attempts: 10_000, events: 1_000_000,
		stepTime: time.Second}
	if o.Quick {
		s = sizes{syncPub: 10_000, asyncPub: 50_000, syncPubFsync: 1_000, asyncPubFsync: 1_000, fsyncs: 500,
			upserts: 100_000, classifyRounds: 200, attemptsFsync: 1_000, attempts: 2_000, events: 100_000,
			stepTime: 200 * time.Millisecond}
	}
	if o.Events > 0 {
		s.events = o.Events
	}
	s.levelTime = sweepLevelTime
	if o.Quick {
		s.levelTime = sweepQuickTime
	}
	if o.LevelTime > 0 {
		s.levelTime = o.LevelTime
	}
	s.engineLevels, s.httpLevels = sweepEngineLevels, sweepHTTPLevels
	return s
}

// Measure is one measured figure with its unit.
type Measure struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Detail string  `json:"detail,omitempty"`
}

// Row is one fledger figure, the limit it is compared with (if any), the
// ratio figure ÷ limit, and the bar it must meet (if any).
type Row struct {
	Figure Measure  `json:"figure"`
	Limit  *Measure `json:"limit,omitempty"`
	// Ratio is Figure.Value / Limit.Value (0 without a limit).
	Ratio float64 `json:"ratio,omitempty"`
	Bar   string  `json:"bar,omitempty"`
	// Status is PASS or MISS when the row has a bar.
	Status string `json:"status,omitempty"`
}

// Report is the result of a run.
type Report struct {
	Started    time.Time     `json:"started"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	Quick      bool          `json:"quick"`
	Go         string        `json:"go"`
	CPUs       int           `json:"cpus"`
	LoadBefore string        `json:"load_before"`
	LoadAfter  string        `json:"load_after"`
	Limits     []Measure     `json:"limits"`
	Rows       []Row         `json:"rows"`
	// Concurrency is the concurrency sweep (nil when not run).
	Concurrency *Sweep   `json:"concurrency,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// ConcurrencyOnly is set when the run was the sweep alone.
	ConcurrencyOnly bool `json:"concurrency_only,omitempty"`
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// Run measures everything and returns the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	sz := sizesFor(o)
	rep := &Report{Started: time.Now(), Quick: o.Quick, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPUs: runtime.NumCPU(), LoadBefore: loadavg()}
	progress := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "%6.1fs  %s\n", time.Since(rep.Started).Seconds(), fmt.Sprintf(format, a...))
		}
	}
	tmp, err := os.MkdirTemp(o.TempDir, "fledger-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if o.ConcurrencyOnly {
		rep.ConcurrencyOnly = true
		bodies, avgBody, evPerCommit, err := commitBodies()
		if err != nil {
			return nil, err
		}
		if err := concurrencySection(ctx, rep, tmp, bodies, sz, progress); err != nil {
			return nil, err
		}
		rep.Notes = append(rep.Notes, bodiesNote(len(bodies), avgBody, evPerCommit))
		rep.LoadAfter = loadavg()
		rep.Elapsed = time.Since(rep.Started)
		return rep, nil
	}
	fixtures, err := findFixtures(o.Fixtures)
	if err != nil {
		return nil, err
	}

	open := func(name string, always bool) (events.Store, error) {
		return events.Open(ctx, events.WithDataDir(filepath.Join(tmp, name)), events.WithSyncAlways(always, 0))
	}
	syncSt, err := open("sync-always", true)
	if err != nil {
		return nil, err
	}
	defer syncSt.Close()
	ivSt, err := open("sync-interval", false)
	if err != nil {
		return nil, err
	}
	defer ivSt.Close()

	// Realistic commit bodies for the raw publishes.
	bodies, avgBody, evPerCommit, err := commitBodies()
	if err != nil {
		return nil, err
	}

	// 1. Limits: publishes on both servers, fsync, SQLite.
	lim := map[string]*Measure{}
	addLimit := func(key string, m Measure) {
		rep.Limits = append(rep.Limits, m)
		lim[key] = &rep.Limits[len(rep.Limits)-1]
	}
	jss := map[string]*events.RawBench{}
	for _, c := range []struct {
		name      string
		st        events.Store
		syncN, aN int
	}{{"fsync always", syncSt, sz.syncPubFsync, sz.asyncPubFsync}, {"fsync interval", ivSt, sz.syncPub, sz.asyncPub}} {
		progress("raw JetStream publish, %s", c.name)
		js, err := rawJS(ctx, c.st)
		if err != nil {
			return nil, err
		}
		r, lat, err := publishSync(ctx, js, bodies, c.syncN)
		if err != nil {
			return nil, err
		}
		s := sortedCopy(lat)
		jss[c.name] = js
		addLimit("sync "+c.name, Measure{Name: "js publish sync, " + c.name, Value: r, Unit: "msg/s",
			Detail: fmt.Sprintf("%d msgs of %d B; p50 %.0f µs, p99 %.0f µs", c.syncN, avgBody, us(pct(s, 50)), us(pct(s, 99)))})
		r, err = publishAsync(ctx, js, bodies, c.aN)
		if err != nil {
			return nil, err
		}
		addLimit("async "+c.name, Measure{Name: "js publish async, " + c.name, Value: r, Unit: "msg/s",
			Detail: fmt.Sprintf("%d msgs, 4096 in flight", c.aN)})
	}
	progress("raw fsync")
	fl, err := fsyncLatencies(tmp, sz.fsyncs)
	if err != nil {
		return nil, err
	}
	fs := sortedCopy(fl)
	addLimit("fsync", Measure{Name: "write 512 B + fsync, p99", Value: us(pct(fs, 99)), Unit: "µs",
		Detail: fmt.Sprintf("%d writes; p50 %.0f µs", sz.fsyncs, us(pct(fs, 50)))})
	progress("raw SQLite upsert")
	up, err := rawUpsert(ctx, filepath.Join(tmp, "upsert.sqlite"), sz.upserts)
	if err != nil {
		return nil, err
	}
	addLimit("upsert", Measure{Name: "sqlite upsert, 1000 rows/tx", Value: up, Unit: "rows/s",
		Detail: fmt.Sprintf("%d rows, 15 cols, 1000 keys, prepared, WAL, synchronous=NORMAL", sz.upserts)})

	// 2. Classification.
	progress("classification")
	vs, err := loadVectors(fixtures)
	if err != nil {
		return nil, err
	}
	cr := measureClassify(vs, sz.classifyRounds)
	rep.Rows = append(rep.Rows,
		barRow(Measure{Name: "classify, median per error", Value: us(cr.P50), Unit: "µs",
			Detail: fmt.Sprintf("%d vectors × %d calls, each vector's best of 5 batches; p90 %.1f µs, p99 %.1f µs", cr.Vectors, sz.classifyRounds, us(cr.P90), us(cr.P99))},
			nil, "< 10 µs", us(cr.P50) < 10),
		barRow(Measure{Name: "classify, all vectors", Value: cr.PerSecond, Unit: "errors/s",
			Detail: "every call timed, preemption included"}, nil, "", true))

	// 3. Decide + append.
	for _, c := range []struct {
		name string
		st   events.Store
		n    int
		bar  bool
	}{{"fsync always", syncSt, sz.attemptsFsync, true}, {"fsync interval", ivSt, sz.attempts, false}} {
		progress("decide + append, %s", c.name)
		js := jss[c.name]
		probe := func(i int) (time.Duration, error) {
			t := time.Now()
			err := js.Publish(ctx, "bench.probe."+strconv.Itoa(i%1000), bodies[i%len(bodies)])
			return time.Since(t), err
		}
		dr, err := runDecide(ctx, c.st, "bench-"+strings.ReplaceAll(c.name, " ", "-"), c.n, probe)
		if err != nil {
			return nil, err
		}
		d, a := sortedCopy(dr.Decision), sortedCopy(dr.Append)
		pl := sortedCopy(dr.Probe)
		rawP50 := Measure{Name: "js publish sync p50 interleaved, " + c.name, Value: us(pct(pl, 50)), Unit: "µs", Detail: "one raw publish after each turn"}
		rawP99 := Measure{Name: "js publish sync p99 interleaved, " + c.name, Value: us(pct(pl, 99)), Unit: "µs", Detail: "one raw publish after each turn"}
		detail := fmt.Sprintf("%d decisions over %d attempts in %d turns; Store.Append alone p50 %.0f µs, p99 %.0f µs",
			dr.Decisions, dr.Attempts, dr.Turns, us(pct(a, 50)), us(pct(a, 99)))
		rep.Rows = append(rep.Rows, barRow(Measure{Name: "decide+append p50, " + c.name, Value: us(pct(d, 50)), Unit: "µs", Detail: detail}, &rawP50, "", true))
		p99 := Measure{Name: "decide+append p99, " + c.name, Value: us(pct(d, 99)), Unit: "µs"}
		if c.bar {
			p99.Detail = fmt.Sprintf("raw fsync p99 in this run %.0f µs", lim["fsync"].Value)
			rep.Rows = append(rep.Rows, barRow(p99, &rawP99, "< 1000 µs", us(pct(d, 99)) < 1000))
		} else {
			rep.Rows = append(rep.Rows, barRow(p99, &rawP99, "", true))
		}
		rep.Rows = append(rep.Rows, barRow(Measure{Name: "attempts/s, " + c.name, Value: rate(dr.Attempts, dr.Elapsed), Unit: "attempts/s",
			Detail: fmt.Sprintf("%.2f decisions per attempt", float64(dr.Decisions)/float64(dr.Attempts))}, lim["sync "+c.name], "", true))
	}
	_ = syncSt.Close()
	_ = ivSt.Close()

	// 3b. Concurrency sweep, on fresh sync-always servers.
	if !o.NoConcurrency {
		if err := concurrencySection(ctx, rep, tmp, bodies, sz, progress); err != nil {
			return nil, err
		}
	}

	// 4. Rebuild: fill, raw read, raw pipeline, rebuild.
	rbSt, err := open("rebuild", false)
	if err != nil {
		return nil, err
	}
	defer rbSt.Close()
	progress("fill: generating %d events", sz.events)
	fr, err := fill(ctx, rbSt, sz.events)
	if err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("rebuild stream: %d events in %d commits (%.2f events/commit), generated with the policy deciders and published async in %.1f s",
		fr.Events, fr.Commits, float64(fr.Events)/float64(fr.Commits), fr.Elapsed.Seconds()))
	evc := float64(fr.Events) / float64(fr.Commits)
	progress("raw ordered-consumer read")
	rr, rb, err := rawRead(ctx, rbSt, fr.LastSeq)
	if err != nil {
		return nil, err
	}
	addLimit("read", Measure{Name: "js ordered consumer read", Value: rr * evc, Unit: "events/s",
		Detail: fmt.Sprintf("%.0f msg/s, %d msgs of %d B avg, bytes only", rr, fr.LastSeq, rb/int64(max(fr.LastSeq, 1)))})
	progress("raw pipeline (read + json decode + upsert)")
	pr, pn, err := rawPipeline(ctx, rbSt, filepath.Join(tmp, "pipeline.sqlite"), fr.LastSeq)
	if err != nil {
		return nil, err
	}
	if pn != fr.Events {
		return nil, fmt.Errorf("pipeline upserted %d events, the stream has %d", pn, fr.Events)
	}
	addLimit("pipeline", Measure{Name: "raw pipeline read+decode+upsert", Value: pr, Unit: "events/s",
		Detail: "ordered consumer → encoding/json Commit → 1 upsert/event, 1000/tx, one goroutine"})
	serial := 1 / (1/lim["read"].Value + 1/lim["upsert"].Value)
	addLimit("read+upsert", Measure{Name: "read then upsert, serial (no decode)", Value: serial, Unit: "events/s",
		Detail: "1 / (1/read + 1/upsert)"})
	progress("rebuild %d events", fr.Events)
	rbr, err := rebuild(ctx, rbSt, tmp, fr.LastSeq)
	if err != nil {
		return nil, fmt.Errorf("rebuild: %w", err)
	}
	if rbr.Events != fr.Events {
		return nil, fmt.Errorf("rebuild folded %d events, the stream has %d", rbr.Events, fr.Events)
	}
	rbm := Measure{Name: "rebuild (projections CatchUp)", Value: rbr.PerSecond, Unit: "events/s",
		Detail: fmt.Sprintf("%d events in %.2f s", rbr.Events, rbr.Elapsed.Seconds())}
	rep.Rows = append(rep.Rows,
		barRow(rbm, lim["pipeline"], "≥ 50% of pipeline", rbr.PerSecond >= 0.5*pr),
		barRow(Measure{Name: "rebuild vs serial read+upsert", Value: rbr.PerSecond, Unit: "events/s"}, lim["read+upsert"], "", true),
		barRow(Measure{Name: fmt.Sprintf("peak heap, rebuild of %d events", rbr.Events), Value: float64(rbr.PeakHeap) / (1 << 20), Unit: "MiB",
			Detail: fmt.Sprintf("heap objects, whole process (server + projector + SQLite); %.1f MiB before", float64(rbr.BaseHeap)/(1<<20))}, nil, "", true))

	// 5. Cost growth with profiles per provider.
	for _, k := range []int{1, 10, 100} {
		progress("step decision, %d profiles per provider", k)
		d, err := measureSteps(k, sz.stepTime)
		if err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, barRow(Measure{Name: fmt.Sprintf("step decision, %d profiles/provider", k), Value: us(d), Unit: "µs",
			Detail: "policy.OnOutcome(429) → cooldown + rotation; pure CPU, best of 5 batches"}, nil, "", true))
	}
	rep.Notes = append(rep.Notes,
		bodiesNote(len(bodies), avgBody, evPerCommit),
		"decide+append: one engine, one turn at a time, zero-latency provider on a virtual clock; a decision is classify + decide + durable append + fold, timed from the call's return to the next call (or the turn's end)")
	rep.LoadAfter = loadavg()
	rep.Elapsed = time.Since(rep.Started)
	return rep, nil
}

// commitBodies generates 2000 realistic commit bodies (the policy
// deciders' commits with the bench config, encoded by the store's
// registry) for the raw publishes; it returns them, their average size
// and events per commit.
func commitBodies() ([][]byte, int, float64, error) {
	var bodies [][]byte
	l, err := loadConfig(3)
	if err != nil {
		return nil, 0, 0, err
	}
	g, err := newGenerator(events.NewCatalogRegistry(), l, "raw", 99, func(_, _ string, b []byte) error {
		bodies = append(bodies, b)
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	for len(bodies) < 2000 {
		if err := g.step(); err != nil {
			return nil, 0, 0, err
		}
	}
	n := 0
	for _, b := range bodies {
		n += len(b)
	}
	return bodies, n / len(bodies), float64(g.Events) / float64(g.Commits), nil
}

func bodiesNote(n, avg int, evPerCommit float64) string {
	return fmt.Sprintf("raw publish bodies: %d realistic commits of %d B average (%.2f events/commit), reused in a cycle", n, avg, evPerCommit)
}

// concurrencySection runs the concurrency sweep into rep: the sweep
// itself, its bar rows and a note.
func concurrencySection(ctx context.Context, rep *Report, tmp string, bodies [][]byte, sz sizes, progress func(string, ...any)) error {
	sw, err := runSweep(ctx, tmp, bodies, sz, progress)
	if err != nil {
		return fmt.Errorf("concurrency sweep: %w", err)
	}
	rep.Concurrency = sw
	rep.Rows = append(rep.Rows, sweepRows(sw)...)
	rep.Notes = append(rep.Notes, fmt.Sprintf("concurrency: fresh sync-always servers; %s per level of new turns back to back "+
		"(one session per worker, warmed up first); one agent per level, 3 anthropic profiles + openai fallback, %d%% of calls a 429 "+
		"(rotation, no retry wait), cooldowns 1 ms; HTTP is fledger serve in-process on 127.0.0.1 (projector and metrics included)",
		sz.levelTime, sweepFailPct))
	return nil
}

// barRow builds a row; ok is ignored when bar is "".
func barRow(f Measure, limit *Measure, bar string, ok bool) Row {
	r := Row{Figure: f, Bar: bar}
	if limit != nil {
		l := *limit
		r.Limit = &l
		if l.Value != 0 {
			r.Ratio = f.Value / l.Value
		}
	}
	if bar != "" {
		r.Status = "PASS"
		if !ok {
			r.Status = "MISS"
		}
	}
	return r
}
