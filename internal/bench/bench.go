// Package bench is `fledger bench`: in one process, on fresh embedded
// servers in a temporary directory, it measures this machine's raw limits
// (JetStream publish, ordered read with and without decode, fsync, SQLite
// batched upsert) and then fledger's own figures (classification,
// decide-and-append, projection rebuild, its heap growth) next to them, as
// ratios, because the machine is shared and noisy.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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
	// RebuildProfile, when set, is a file to write a CPU profile of the
	// rebuild alone to (runtime/pprof; read it with go tool pprof).
	RebuildProfile string

	// sizes overrides every size (tests).
	sizes *sizes
}

// sizes are the per-phase sizes of a run.
type sizes struct {
	syncPub, asyncPub, syncPubFsync, asyncPubFsync, fsyncs int
	upserts, classifyRounds                                int
	attemptsFsync, attempts                                int
	events                                                 int
	// startup is the small ledger of the start-up rows (startup.go).
	startup int
	// stateN are the sessions (and the open turns) of the engine state
	// rows (statesize.go), small then large.
	stateN   []int
	stepTime time.Duration
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
		startup: 10_000, stateN: []int{1_000, 50_000}, stepTime: time.Second}
	if o.Quick {
		s = sizes{syncPub: 10_000, asyncPub: 50_000, syncPubFsync: 1_000, asyncPubFsync: 1_000, fsyncs: 500,
			upserts: 100_000, classifyRounds: 200, attemptsFsync: 1_000, attempts: 2_000, events: 100_000,
			startup: 10_000, stateN: []int{1_000, 10_000}, stepTime: 200 * time.Millisecond}
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

// Run measures everything and returns the report: the limits (raw
// publishes, fsync, SQLite), classification, decide + append, the
// concurrency sweep, the rebuild and the cost growth with profiles, each a
// method of [runner].
func Run(ctx context.Context, o Options) (*Report, error) {
	b := &runner{ctx: ctx, o: o, sz: sizesFor(o), lim: map[string]*Measure{}}
	b.rep = &Report{Started: time.Now(), Quick: o.Quick, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPUs: runtime.NumCPU(), LoadBefore: loadavg()}
	tmp, err := os.MkdirTemp(o.TempDir, "fledger-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	b.tmp = tmp
	if o.ConcurrencyOnly {
		return b.concurrencyOnly()
	}
	return b.all()
}

// runner is one run: its options, sizes, temporary directory, report, and
// the limits measured so far by key.
type runner struct {
	ctx context.Context
	o   Options
	sz  sizes
	tmp string
	rep *Report
	lim map[string]*Measure
	// The realistic commit bodies of the raw publishes.
	bodies      [][]byte
	avgBody     int
	evPerCommit float64
}

// progress writes one line per phase to Options.Progress.
func (b *runner) progress(format string, a ...any) {
	if b.o.Progress != nil {
		fmt.Fprintf(b.o.Progress, "%6.1fs  %s\n", time.Since(b.rep.Started).Seconds(), fmt.Sprintf(format, a...))
	}
}

// addLimit records a limit under key.
func (b *runner) addLimit(key string, m Measure) {
	b.rep.Limits = append(b.rep.Limits, m)
	b.lim[key] = &b.rep.Limits[len(b.rep.Limits)-1]
}

// open opens a fresh embedded server in the run's directory.
func (b *runner) open(name string, always bool) (events.Store, error) {
	return events.Open(b.ctx, events.WithDataDir(filepath.Join(b.tmp, name)), events.WithSyncAlways(always, 0))
}

// loadBodies generates the commit bodies of the raw publishes.
func (b *runner) loadBodies() error {
	var err error
	b.bodies, b.avgBody, b.evPerCommit, err = commitBodies()
	return err
}

// finish stamps the report's end.
func (b *runner) finish() (*Report, error) {
	b.rep.LoadAfter = loadavg()
	b.rep.Elapsed = time.Since(b.rep.Started)
	return b.rep, nil
}

// concurrencyOnly is a run of the concurrency sweep alone.
func (b *runner) concurrencyOnly() (*Report, error) {
	b.rep.ConcurrencyOnly = true
	if err := b.loadBodies(); err != nil {
		return nil, err
	}
	if err := concurrencySection(b.ctx, b.rep, b.tmp, b.bodies, b.sz, b.progress); err != nil {
		return nil, err
	}
	b.rep.Notes = append(b.rep.Notes, bodiesNote(len(b.bodies), b.avgBody, b.evPerCommit))
	return b.finish()
}

// all is a full run.
func (b *runner) all() (*Report, error) {
	fixtures, err := findFixtures(b.o.Fixtures)
	if err != nil {
		return nil, err
	}
	syncSt, err := b.open("sync-always", true)
	if err != nil {
		return nil, err
	}
	defer syncSt.Close()
	ivSt, err := b.open("sync-interval", false)
	if err != nil {
		return nil, err
	}
	defer ivSt.Close()
	if err := b.loadBodies(); err != nil {
		return nil, err
	}
	// 1. Limits: publishes on both servers, fsync, SQLite.
	jss, err := b.publishLimits(syncSt, ivSt)
	if err != nil {
		return nil, err
	}
	if err := b.diskLimits(); err != nil {
		return nil, err
	}
	// 2. Classification.
	if err := b.classifyRows(fixtures); err != nil {
		return nil, err
	}
	// 3. Decide + append.
	if err := b.decideRows(jss, syncSt, ivSt); err != nil {
		return nil, err
	}
	_ = syncSt.Close()
	_ = ivSt.Close()
	// 3b. Concurrency sweep, on fresh sync-always servers.
	if !b.o.NoConcurrency {
		if err := concurrencySection(b.ctx, b.rep, b.tmp, b.bodies, b.sz, b.progress); err != nil {
			return nil, err
		}
	}
	// 4. Rebuild: fill, raw reads, rebuild, raw reads again.
	rbSt, err := b.open("rebuild", false)
	if err != nil {
		return nil, err
	}
	defer rbSt.Close()
	if err := b.rebuildRows(rbSt); err != nil {
		return nil, err
	}
	// 4b. Engine start-up from a snapshot and from sequence 1
	// (startup.go), on the rebuild's stream and a small one.
	if err := b.startupRows(rbSt, b.sz.events); err != nil {
		return nil, err
	}
	// 4c. Engine state per session and per open turn (statesize.go):
	// what grows with them and is never evicted.
	if err := b.stateRows(); err != nil {
		return nil, err
	}
	// 5. Cost growth with profiles per provider.
	if err := b.stepRows(); err != nil {
		return nil, err
	}
	// 6. Storage growth per turn (growth.go).
	if err := b.growthRows(fixtures); err != nil {
		return nil, err
	}
	b.rep.Notes = append(b.rep.Notes,
		bodiesNote(len(b.bodies), b.avgBody, b.evPerCommit),
		"decide+append: one engine, one turn at a time, zero-latency provider on a virtual clock; a decision is classify + decide + durable append + fold, timed from the call's return to the next call (or the turn's end)")
	return b.finish()
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
