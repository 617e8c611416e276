package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// The concurrency sweep (issue 13): turns/s and latency per turn at 1, 8,
// 64 and 256 concurrent turns through the Go engine, and at 1, 8, 16, 64
// and 256 HTTP clients through `fledger serve` (concurrency_http.go), each
// next to the raw JetStream publish rate of a fresh sync-always server at
// the same concurrency (N goroutines of sync publishes; async publishes
// with N in flight), with the engine's commits and conflicts.
//
// Every level runs for a fixed wall time (2 s, --quick 0.5 s): N workers,
// each on its own session, start turns back to back until the level's time
// is up; turns in flight then finish, and the level's elapsed time runs
// until the last one has. Nothing is measured while warming up (one turn
// per session, so every session has its auto pin).

// Sweep levels (docs/performance.md "Concurrency sweep").
var (
	sweepEngineLevels = []int{1, 8, 64, 256}
	sweepHTTPLevels   = []int{1, 8, 16, 64, 256}
)

const (
	// sweepFailPct is the share of provider calls that fail with a 429.
	sweepFailPct = 10
	// sweepLevelTime is the wall time per level (quick: sweepQuickTime).
	sweepLevelTime = 2 * time.Second
	sweepQuickTime = 500 * time.Millisecond
	// sweepMaxSteps bounds the steps of one turn (a runaway protocol loop
	// ends the level with an error instead of spinning).
	sweepMaxSteps = 64
	// sweepDrain bounds how long a level may take after its time is up
	// (turns in flight finishing, async acks arriving).
	sweepDrain = 60 * time.Second
)

// concurrencyConfigYAML is the sweep's failover config: one agent, 3 auth
// profiles on anthropic (default order: lastUsed oldest first, sessions
// sticky through their auto pin) and openai as the fallback provider with
// one profile. A 429 without retry-after rotates at once (no same-profile
// retries: nothing waits), and cooldowns last 1 ms, so a rate-limited
// profile is usable again by the next turn: the sweep measures the write
// path under contention, not a provider outage in which every profile is
// cooling down and turns end exhausted without a call.
const concurrencyConfigYAML = `auth:
  profiles:
    "anthropic:p0": {provider: anthropic, type: api_key}
    "anthropic:p1": {provider: anthropic, type: api_key}
    "anthropic:p2": {provider: anthropic, type: api_key}
    "openai:p0": {provider: openai, type: api_key}
  cooldowns:
    ladderMs: [1, 1, 1]
retry:
  provider:
    maxRetries: 0
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [openai/gpt-5]
`

func loadConcurrencyConfig() (*config.Loaded, error) {
	return config.Parse([]byte(concurrencyConfigYAML), "bench-concurrency")
}

// rateLimitMessage is the 429 body the sweep's callers fail with.
const rateLimitMessage = `429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 450,000 input tokens per minute."}}`

// Sweep is the concurrency sweep's result.
type Sweep struct {
	// LevelTime is the wall time each level ran new turns for.
	LevelTime time.Duration `json:"level_time_ns"`
	// FailPct is the share of provider calls answered with a 429.
	FailPct int `json:"fail_pct"`
	// Raw holds the raw JetStream publish rates, one per concurrency.
	Raw []RawLevel `json:"raw"`
	// Levels holds the engine levels, then the HTTP levels.
	Levels []SweepLevel `json:"levels"`
}

// RawLevel is the raw publish rate of the sweep's sync-always server at one
// concurrency.
type RawLevel struct {
	Concurrency int `json:"concurrency"`
	// SyncMsgs sync publishes from Concurrency goroutines, each waiting for
	// its ack: SyncPerSec msg/s, per-publish p50/p99 in µs.
	SyncMsgs   int     `json:"sync_msgs"`
	SyncPerSec float64 `json:"sync_msgs_per_s"`
	SyncP50us  float64 `json:"sync_p50_us"`
	SyncP99us  float64 `json:"sync_p99_us"`
	// AsyncMsgs async publishes with at most Concurrency in flight.
	AsyncMsgs   int     `json:"async_msgs"`
	AsyncPerSec float64 `json:"async_msgs_per_s"`
}

// SweepLevel is one path (engine or http) at one concurrency.
type SweepLevel struct {
	Path        string `json:"path"`
	Concurrency int    `json:"concurrency"`
	// Turns finished (answered, exhausted or stopped) in Elapsed.
	Turns       int           `json:"turns"`
	Answered    int           `json:"answered"`
	Calls       int           `json:"calls"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	TurnsPerSec float64       `json:"turns_per_s"`
	// P50us and P99us are per finished turn (RunTurn's wall time; over
	// HTTP, begin to done/exhausted/stop), in µs.
	P50us float64 `json:"p50_us"`
	P99us float64 `json:"p99_us"`
	// Commits and Conflicts are the engine's counters over the level
	// (engine.Stats(); over HTTP, fledger_engine_commits_total and
	// fledger_engine_conflicts_total from the server's /metrics).
	Commits            uint64  `json:"commits"`
	Conflicts          uint64  `json:"conflicts"`
	ConflictsPerCommit float64 `json:"conflicts_per_commit"`
	// Contention counts turns given up on bounded conflict retries
	// (engine.ErrConflictRetries; over HTTP, 503 contention answers, each
	// retried up to 3 times), Errors any other failed turn, FirstError the
	// first of those.
	Contention int    `json:"contention"`
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
}

// rawFor returns the raw level at concurrency n (nil when not measured).
func (s *Sweep) rawFor(n int) *RawLevel {
	for i := range s.Raw {
		if s.Raw[i].Concurrency == n {
			return &s.Raw[i]
		}
	}
	return nil
}

// level returns the level of path at concurrency n (nil when not run).
func (s *Sweep) level(path string, n int) *SweepLevel {
	for i := range s.Levels {
		if s.Levels[i].Path == path && s.Levels[i].Concurrency == n {
			return &s.Levels[i]
		}
	}
	return nil
}

// fastClock is the wall clock shifted by every wait slept so far: Sleep
// returns at once and moves the clock forward by d, so a retry back-off or
// a wait ends immediately, and time stays monotonic for every goroutine.
type fastClock struct{ off atomic.Int64 }

func (c *fastClock) Now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

func (c *fastClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.off.Add(int64(d))
	}
	return ctx.Err()
}

// sweepCaller is one worker's provider: no latency, sweepFailPct% of calls
// a 429 rate limit (*classify.ProviderError, no retry-after).
type sweepCaller struct {
	rng   *rand.Rand
	calls int
}

func newSweepCaller(level, worker int) *sweepCaller {
	return &sweepCaller{rng: rand.New(rand.NewPCG(uint64(level), uint64(worker)))}
}

// fail draws the next call's outcome.
func (c *sweepCaller) fail() bool {
	c.calls++
	return c.rng.IntN(100) < sweepFailPct
}

func (c *sweepCaller) Call(_ context.Context, r engine.CallRequest) (engine.Answer, error) {
	if c.fail() {
		return engine.Answer{}, &classify.ProviderError{Provider: r.Provider, Model: r.Model, Status: 429,
			Type: "rate_limit_error", Message: rateLimitMessage}
	}
	return engine.Answer{Text: "ok"}, nil
}

// workerStats is what one worker counted in a level.
type workerStats struct {
	lat                                 []time.Duration
	answered, calls, contention, errors int
	firstErr                            error
}

func (w *workerStats) fail(err error) {
	w.errors++
	if w.firstErr == nil {
		w.firstErr = err
	}
}

// runWorkers runs n workers: each first calls warm once; once every worker
// has warmed up, started is called, and each worker then calls turn back to
// back until d has passed since the start. A turn that finished (answered,
// exhausted, stopped) adds its wall time to the samples; a worker stops
// early when turn returns stop (a broken level) or ctx ends. It returns the
// merged counts and the measured elapsed time (from the start until the
// last worker returned).
func runWorkers(ctx context.Context, n int, d time.Duration,
	warm func(ctx context.Context, w int) error, started func(),
	turn func(ctx context.Context, w int, st *workerStats) (finished, stop bool)) (workerStats, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, d+sweepDrain+30*time.Second)
	defer cancel()
	stats := make([]workerStats, n)
	warmErr := make([]error, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time
	ready.Add(n)
	done.Add(n)
	for w := range n {
		go func() {
			defer done.Done()
			warmErr[w] = warm(ctx, w)
			ready.Done()
			<-start
			if warmErr[w] != nil {
				return
			}
			st := &stats[w]
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t := time.Now()
				finished, stop := turn(ctx, w, st)
				if finished {
					st.lat = append(st.lat, time.Since(t))
				}
				if stop {
					return
				}
			}
		}()
	}
	ready.Wait()
	if err := errors.Join(warmErr...); err != nil {
		deadline = time.Now()
		close(start)
		done.Wait()
		return workerStats{}, 0, fmt.Errorf("warm-up: %w", err)
	}
	started()
	t0 := time.Now()
	deadline = t0.Add(d)
	close(start)
	done.Wait()
	elapsed := time.Since(t0)
	var all workerStats
	for i := range stats {
		s := &stats[i]
		all.lat = append(all.lat, s.lat...)
		all.answered += s.answered
		all.calls += s.calls
		all.contention += s.contention
		all.errors += s.errors
		if all.firstErr == nil {
			all.firstErr = s.firstErr
		}
	}
	if err := ctx.Err(); err != nil {
		return all, elapsed, fmt.Errorf("level did not end within %s after its time: %w", sweepDrain, err)
	}
	return all, elapsed, nil
}

// levelOf fills a SweepLevel from the merged worker counts.
func levelOf(path string, n int, ws workerStats, elapsed time.Duration, commits, conflicts uint64) SweepLevel {
	s := sortedCopy(ws.lat)
	lv := SweepLevel{Path: path, Concurrency: n, Turns: len(ws.lat), Answered: ws.answered, Calls: ws.calls,
		Elapsed: elapsed, TurnsPerSec: rate(len(ws.lat), elapsed), P50us: us(pct(s, 50)), P99us: us(pct(s, 99)),
		Commits: commits, Conflicts: conflicts, Contention: ws.contention, Errors: ws.errors}
	if commits > 0 {
		lv.ConflictsPerCommit = float64(conflicts) / float64(commits)
	}
	if ws.firstErr != nil {
		lv.FirstError = ws.firstErr.Error()
	}
	return lv
}

// engineLevel runs n concurrent turns through one fresh engine (its own
// agent) on st for d.
func engineLevel(ctx context.Context, st events.Store, l *config.Loaded, n int, d time.Duration) (SweepLevel, error) {
	agent := "conc-engine-" + strconv.Itoa(n)
	clock := &fastClock{}
	e, err := engine.New(ctx, st, agent, engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 7 }))
	if err != nil {
		return SweepLevel{}, err
	}
	defer e.Close()
	if _, _, err := e.ApplyConfig(ctx, "bench-concurrency", l); err != nil {
		return SweepLevel{}, err
	}
	callers := make([]*sweepCaller, n)
	session := func(w int) string { return fmt.Sprintf("agent:%s:bench:direct:%d", agent, w) }
	run := func(ctx context.Context, w int) (*engine.TurnResult, error) {
		return e.RunTurn(ctx, engine.TurnRequest{Session: session(w)}, callers[w])
	}
	warm := func(ctx context.Context, w int) error {
		callers[w] = newSweepCaller(n, w)
		_, err := run(ctx, w)
		if err != nil && !turnEnded(err) && !errors.Is(err, engine.ErrConflictRetries) {
			return err
		}
		return nil
	}
	var base engine.Stats
	turn := func(ctx context.Context, w int, ws *workerStats) (bool, bool) {
		c := callers[w]
		before := c.calls
		res, err := run(ctx, w)
		ws.calls += c.calls - before
		switch {
		case err == nil:
			if res != nil && res.Outcome == "succeeded" {
				ws.answered++
			}
			return true, false
		case turnEnded(err):
			return true, false
		case errors.Is(err, engine.ErrConflictRetries):
			ws.contention++
			return false, false
		default:
			ws.fail(err)
			return false, true
		}
	}
	ws, elapsed, err := runWorkers(ctx, n, d, warm, func() { base = e.Stats() }, turn)
	if err != nil {
		return SweepLevel{}, err
	}
	s := e.Stats()
	return levelOf("engine", n, ws, elapsed, s.Commits-base.Commits, s.Conflicts-base.Conflicts), nil
}

// turnEnded reports whether RunTurn's error ends the turn as the policy
// decided (every candidate failed, or a stop): a finished turn.
func turnEnded(err error) bool {
	var ex *engine.ExhaustedError
	var stop *engine.StoppedError
	return errors.As(err, &ex) || errors.As(err, &stop)
}

// rawSyncLevel publishes from n goroutines for d, each waiting for every
// ack, on the BENCH stream of js.
func rawSyncLevel(ctx context.Context, js *events.RawBench, bodies [][]byte, n int, d time.Duration) (int, float64, []time.Duration, error) {
	lats := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for g := range n {
		wg.Go(func() {
			subj := "bench.conc." + strconv.Itoa(n) + "." + strconv.Itoa(g)
			for i := g; time.Now().Before(deadline); i += n {
				t := time.Now()
				if err := js.Publish(ctx, subj, bodies[i%len(bodies)]); err != nil {
					errs[g] = fmt.Errorf("sync publish (%d goroutines): %w", n, err)
					return
				}
				lats[g] = append(lats[g], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, 0, nil, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return len(all), rate(len(all), elapsed), all, nil
}

// rawAsyncLevel publishes asynchronously for d with at most n in flight
// (a JetStream context whose async window is n), then waits for every ack.
func rawAsyncLevel(ctx context.Context, st events.Store, bodies [][]byte, n int, d time.Duration) (int, float64, error) {
	js, err := events.NewRawBench(ctx, st, n, false)
	if err != nil {
		return 0, 0, err
	}
	subj := "bench.conc-async." + strconv.Itoa(n)
	start := time.Now()
	deadline := start.Add(d)
	sent := 0
	for ; time.Now().Before(deadline); sent++ {
		if err := js.PublishAsync(subj, bodies[sent%len(bodies)]); err != nil {
			return 0, 0, fmt.Errorf("async publish (%d in flight): %w", n, err)
		}
	}
	select {
	case <-js.AsyncComplete():
	case <-time.After(sweepDrain):
		return 0, 0, fmt.Errorf("async publish (%d in flight): %d acks still pending after %s", n, js.AsyncPending(), sweepDrain)
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	if f, _ := js.Failed(); f > 0 {
		return 0, 0, fmt.Errorf("async publish (%d in flight): %d of %d failed", n, f, sent)
	}
	return sent, rate(sent, time.Since(start)), nil
}

// runSweep runs the whole sweep on fresh sync-always servers under tmp:
// on one server, per concurrency, the raw sync and async publish rates,
// then the engine level at that concurrency (each level its own agent and
// engine); then every HTTP level, each on a fresh server of its own
// (concurrency_http.go).
func runSweep(ctx context.Context, tmp string, bodies [][]byte, sz sizes, progress func(string, ...any)) (*Sweep, error) {
	l, err := loadConcurrencyConfig()
	if err != nil {
		return nil, err
	}
	sw := &Sweep{LevelTime: sz.levelTime, FailPct: sweepFailPct}
	raw := slices.Clone(sz.engineLevels)
	raw = append(raw, sz.httpLevels...)
	slices.Sort(raw)
	raw = slices.Compact(raw)

	st, err := events.Open(ctx, events.WithDataDir(filepath.Join(tmp, "conc-engine")), events.WithSyncAlways(true, 0))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	js, err := rawJS(ctx, st)
	if err != nil {
		return nil, err
	}
	for _, n := range raw {
		progress("concurrency: raw publish, %d concurrent, fsync always", n)
		rl := RawLevel{Concurrency: n}
		var lat []time.Duration
		if rl.SyncMsgs, rl.SyncPerSec, lat, err = rawSyncLevel(ctx, js, bodies, n, sz.levelTime); err != nil {
			return nil, err
		}
		s := sortedCopy(lat)
		rl.SyncP50us, rl.SyncP99us = us(pct(s, 50)), us(pct(s, 99))
		if rl.AsyncMsgs, rl.AsyncPerSec, err = rawAsyncLevel(ctx, st, bodies, n, sz.levelTime); err != nil {
			return nil, err
		}
		sw.Raw = append(sw.Raw, rl)
		if slices.Contains(sz.engineLevels, n) {
			progress("concurrency: engine, %d concurrent turns", n)
			lv, err := engineLevel(ctx, st, l, n, sz.levelTime)
			if err != nil {
				return nil, fmt.Errorf("engine, %d concurrent turns: %w", n, err)
			}
			sw.Levels = append(sw.Levels, lv)
		}
	}
	_ = st.Close()
	if len(sz.httpLevels) > 0 {
		hl, err := runHTTPLevels(ctx, filepath.Join(tmp, "conc-http"), l, sz.httpLevels, sz.levelTime, progress)
		if err != nil {
			return nil, err
		}
		sw.Levels = append(sw.Levels, hl...)
	}
	return sw, nil
}

// sweepRows are the bars as report rows: through the engine,
// turns/s at 64 ≥ 5× the rate at 1 and conflicts < 2% of commits at 64;
// over HTTP, 16 clients ≥ 4× the turns/s of 1 client. A bar whose levels
// were not run is left out.
func sweepRows(sw *Sweep) []Row {
	var rows []Row
	e1, e64 := sw.level("engine", 1), sw.level("engine", 64)
	if e1 != nil && e64 != nil {
		lim := Measure{Name: "engine turns/s, 1 concurrent turn", Value: e1.TurnsPerSec, Unit: "turns/s"}
		rows = append(rows, barRow(Measure{Name: "engine turns/s, 64 concurrent turns", Value: e64.TurnsPerSec, Unit: "turns/s",
			Detail: fmt.Sprintf("p50 %s, p99 %s per turn (1 turn: p50 %s, p99 %s)", msText(e64.P50us), msText(e64.P99us), msText(e1.P50us), msText(e1.P99us))},
			&lim, "≥ 5× (500%) of 1", e64.TurnsPerSec >= 5*e1.TurnsPerSec))
	}
	if e64 != nil {
		rows = append(rows, barRow(Measure{Name: "engine conflicts/commit, 64 concurrent turns", Value: 100 * e64.ConflictsPerCommit, Unit: "% of commits",
			Detail: fmt.Sprintf("%d conflicts for %d commits; %d turns given up on conflict retries", e64.Conflicts, e64.Commits, e64.Contention)},
			nil, "< 2%", e64.Commits > 0 && e64.ConflictsPerCommit < 0.02))
	}
	h1, h16 := sw.level("http", 1), sw.level("http", 16)
	if h1 != nil && h16 != nil {
		lim := Measure{Name: "HTTP turns/s, 1 client", Value: h1.TurnsPerSec, Unit: "turns/s"}
		rows = append(rows, barRow(Measure{Name: "HTTP turns/s, 16 clients", Value: h16.TurnsPerSec, Unit: "turns/s",
			Detail: fmt.Sprintf("p50 %s, p99 %s per turn; %.1f%% conflicts/commit (1 client: p50 %s, p99 %s)",
				msText(h16.P50us), msText(h16.P99us), 100*h16.ConflictsPerCommit, msText(h1.P50us), msText(h1.P99us))},
			&lim, "≥ 4× (400%) of 1", h16.TurnsPerSec >= 4*h1.TurnsPerSec))
	}
	return rows
}

// msText renders µs as ms with 2 significant decimals.
func msText(usv float64) string {
	switch ms := usv / 1000; {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	default:
		return fmt.Sprintf("%.0f ms", ms)
	}
}
