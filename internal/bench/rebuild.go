package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// fillResult describes a generated stream.
type fillResult struct {
	Events, Commits int
	LastSeq         uint64
	Elapsed         time.Duration
}

// fill writes a realistic fledger stream of at least n events to st: two
// agents (one generator goroutine each, 16 sessions, 3 profiles per
// provider) whose commits are published asynchronously.
func fill(ctx context.Context, st events.Store, n int) (fillResult, error) {
	start := time.Now()
	l, err := loadConfig(3)
	if err != nil {
		return fillResult{}, err
	}
	const agents = 2
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		res  fillResult
		errs []error
	)
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := func() error {
				pf, err := newPublishFill(st)
				if err != nil {
					return err
				}
				g, err := newGenerator(events.NewCatalogRegistry(), l, fmt.Sprintf("gw-%d", a), uint64(a+1), pf.emit)
				if err != nil {
					return err
				}
				for g.Events < (n+agents-1)/agents {
					if g.Commits%1024 == 0 && ctx.Err() != nil {
						return ctx.Err()
					}
					if err := g.step(); err != nil {
						return err
					}
				}
				if err := pf.wait(ctx); err != nil {
					return err
				}
				mu.Lock()
				res.Events += g.Events
				res.Commits += g.Commits
				mu.Unlock()
				return nil
			}()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return res, errs[0]
	}
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return res, err
	}
	if last != uint64(res.Commits) {
		return res, fmt.Errorf("stream holds %d messages, %d commits were generated", last, res.Commits)
	}
	res.LastSeq = last
	res.Elapsed = time.Since(start)
	return res, nil
}

// heapSampler tracks the peak of the live heap (runtime/metrics
// /gc/heap/live:bytes: the heap objects marked live by the last GC, so
// garbage not yet collected does not count), sampled every
// heapSamplePeriod. It is the whole process's heap: projector, SQLite
// (modernc is pure Go) and the embedded NATS server together.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
}

const (
	heapMetric       = "/gc/heap/live:bytes"
	heapSamplePeriod = 2 * time.Millisecond
)

// heapLive collects garbage and returns the live heap. It collects
// twice: what a sync.Pool held (encoding/json's buffers keep the last
// snapshot's bytes) survives one collection as the pool's victim cache.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// settleHeap waits, a second at most, until the live heap stops falling
// (by 64 KiB in 50 ms): what a closed server or consumer still releases
// in the background is gone before a heap figure is taken.
func settleHeap() {
	prev := heapLive()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		cur := heapLive()
		if cur+64<<10 > prev {
			return
		}
		prev = cur
	}
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(heapSamplePeriod)
		defer t.Stop()
		s := []metrics.Sample{{Name: heapMetric}}
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// finish takes a last sample after a final GC (what the rebuild still
// holds), stops the sampler and returns the peak and that final sample.
func (h *heapSampler) finish() (peak, final uint64) {
	final = heapLive()
	close(h.stop)
	<-h.done
	return max(h.peak, final), final
}

// rebuildResult is one projection rebuild.
type rebuildResult struct {
	Events    int
	Elapsed   time.Duration
	PerSecond float64
	// ReadBack is the rows the bounded cache read back (Result.ReadBack).
	ReadBack int
	// BaseHeap is the live heap after a GC just before the rebuild,
	// PeakHeap the highest sample during it, FinalHeap the live heap after
	// a GC at its end (bytes).
	BaseHeap, PeakHeap, FinalHeap uint64
}

// Growth is the peak live heap during the rebuild minus the live heap
// before it (bytes, 0 when it never rose).
func (r rebuildResult) Growth() uint64 {
	if r.PeakHeap < r.BaseHeap {
		return 0
	}
	return r.PeakHeap - r.BaseHeap
}

// rebuild folds the whole stream into a fresh projection database in dir
// (projections.Open + Projector.CatchUp, what `fledger replay rebuild`
// does) and samples the live heap meanwhile.
func rebuild(ctx context.Context, st events.Store, dir string, last uint64) (rebuildResult, error) {
	db, err := projections.Open(ctx, filepath.Join(dir, "rebuild.sqlite"))
	if err != nil {
		return rebuildResult{}, err
	}
	defer db.Close()
	res := rebuildResult{BaseHeap: heapLive()}
	h := startHeapSampler()
	r, err := projections.NewProjector(db).CatchUp(ctx, st, last)
	res.PeakHeap, res.FinalHeap = h.finish()
	if err != nil {
		return res, err
	}
	res.Events, res.Elapsed, res.ReadBack = r.Events, r.Elapsed, r.ReadBack
	res.PerSecond = rate(r.Events, r.Elapsed)
	return res, nil
}

// rawDecode reads the first last messages of fledger's stream with an
// ordered consumer, as rawRead, and decodes each with the events
// package's decoder (Registry.DecodeCommit, what the store's reads do),
// on one goroutine. It returns events/s and the events decoded.
func rawDecode(ctx context.Context, st events.Store, last uint64) (float64, int, error) {
	reg := events.NewCatalogRegistry()
	start := time.Now()
	it, err := events.NewRawReader(ctx, st)
	if err != nil {
		return 0, 0, err
	}
	defer it.Stop()
	n := 0
	for i := uint64(0); i < last; i++ {
		seq, subj, data, err := it.NextMsg()
		if err != nil {
			return 0, 0, err
		}
		evs, err := reg.DecodeCommit(data, seq, subj)
		if err != nil {
			return 0, 0, fmt.Errorf("decode %d: %w", seq, err)
		}
		n += len(evs)
	}
	return rate(n, time.Since(start)), n, nil
}

// rebuildRows fills rbSt, a fresh stream, and measures on it, in this
// order: the raw ordered read (bytes only) and the raw ordered read with
// the events package's decode, the projections rebuild with the live heap
// sampled, then both raw reads again. Each raw limit is the mean of its
// two runs, which bracket the rebuild in time (on a shared machine the
// load moves within a minute); the rebuild's bar is half the bytes-only
// rate, the heap's 100 MiB of growth.
func (b *runner) rebuildRows(rbSt events.Store) error {
	b.progress("fill: generating %d events", b.sz.events)
	fr, err := fill(b.ctx, rbSt, b.sz.events)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("rebuild stream: %d events in %d commits (%.2f events/commit), generated with the policy deciders and published async in %.1f s",
		fr.Events, fr.Commits, float64(fr.Events)/float64(fr.Commits), fr.Elapsed.Seconds()))
	if err := b.settleDuplicates(rbSt); err != nil {
		return err
	}
	evc := float64(fr.Events) / float64(fr.Commits)
	var reads, decodes [2]float64
	var readCPU [2]time.Duration
	var bytes int64
	raw := func(i int) error {
		b.progress("raw ordered-consumer read (%d of 2)", i+1)
		cpu0 := processCPU()
		rr, rb, err := rawRead(b.ctx, rbSt, fr.LastSeq)
		if err != nil {
			return err
		}
		readCPU[i] = processCPU() - cpu0
		reads[i], bytes = rr*evc, rb
		b.progress("raw ordered-consumer read + decode (%d of 2)", i+1)
		dr, dn, err := rawDecode(b.ctx, rbSt, fr.LastSeq)
		if err != nil {
			return err
		}
		if dn != fr.Events {
			return fmt.Errorf("raw decode read %d events, the stream has %d", dn, fr.Events)
		}
		decodes[i] = dr
		return nil
	}
	if err := raw(0); err != nil {
		return err
	}
	b.progress("rebuild %d events", fr.Events)
	stopProfile, err := startCPUProfile(b.o.RebuildProfile)
	if err != nil {
		return err
	}
	cpu0 := processCPU()
	rbr, err := rebuild(b.ctx, rbSt, b.tmp, fr.LastSeq)
	rebuildCPU := processCPU() - cpu0
	if perr := stopProfile(); err == nil && perr != nil {
		return perr
	}
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if rbr.Events != fr.Events {
		return fmt.Errorf("rebuild folded %d events, the stream has %d", rbr.Events, fr.Events)
	}
	if err := raw(1); err != nil {
		return err
	}
	b.addLimit("read", Measure{Name: "js ordered consumer read", Value: (reads[0] + reads[1]) / 2, Unit: "events/s",
		Detail: fmt.Sprintf("bytes only, %d msgs of %d B avg; mean of %s before and %s after the rebuild; process CPU %s µs per event",
			fr.LastSeq, bytes/int64(max(fr.LastSeq, 1)), num(reads[0]), num(reads[1]), perEvent((readCPU[0]+readCPU[1])/2, fr.Events))})
	b.addLimit("read+decode", Measure{Name: "js ordered consumer read + decode", Value: (decodes[0] + decodes[1]) / 2, Unit: "events/s",
		Detail: fmt.Sprintf("each commit decoded by events.Registry.DecodeCommit on the reading goroutine; mean of %s before and %s after the rebuild",
			num(decodes[0]), num(decodes[1]))})
	read, decode := b.lim["read"], b.lim["read+decode"]
	rbm := Measure{Name: "rebuild (projections CatchUp)", Value: rbr.PerSecond, Unit: "events/s",
		Detail: fmt.Sprintf("%d events in %.2f s, process CPU %s µs per event; ordered-consumer read decoded on %d goroutines, the fold on the projector's, each batch written to SQLite on another; %d rows read back by the bounded cache",
			rbr.Events, rbr.Elapsed.Seconds(), perEvent(rebuildCPU, rbr.Events), runtime.GOMAXPROCS(0), rbr.ReadBack)}
	growth := float64(rbr.Growth()) / (1 << 20)
	b.rep.Rows = append(b.rep.Rows,
		barRow(rbm, read, "≥ 50% of raw ordered read", rbr.PerSecond >= 0.5*read.Value),
		barRow(Measure{Name: "rebuild vs raw read + decode", Value: rbr.PerSecond, Unit: "events/s"}, decode, "", true),
		barRow(Measure{Name: fmt.Sprintf("heap growth, rebuild of %d events", rbr.Events), Value: growth, Unit: "MiB",
			Detail: fmt.Sprintf("peak live heap (%s, sampled every %s, and after a final GC) minus the live heap before: %.1f → %.1f MiB peak, %.1f MiB after; whole process (server + projector + SQLite)",
				heapMetric, heapSamplePeriod, float64(rbr.BaseHeap)/(1<<20), float64(rbr.PeakHeap)/(1<<20), float64(rbr.FinalHeap)/(1<<20))},
			nil, "< 100 MiB", growth < 100))
	return nil
}

// settleDuplicates has the server drop the fill's duplicate-window
// message ids before anything is read (RawBench.SettleDuplicates: a real
// rebuild reads a stream whose last publish is older than the window) and
// notes what that took off the live heap.
func (b *runner) settleDuplicates(st events.Store) error {
	b.progress("settle the duplicate window")
	rb, err := events.NewRawBench(b.ctx, st, 1, false)
	if err != nil {
		return err
	}
	settleHeap()
	before := heapLive()
	if err := rb.SettleDuplicates(b.ctx); err != nil {
		return err
	}
	settleHeap()
	after := heapLive()
	b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("rebuild stream: duplicate window settled before the reads (the server's message ids of the fill dropped, as once a ledger's last publish is older than the window): live heap %.1f → %.1f MiB",
		float64(before)/(1<<20), float64(after)/(1<<20)))
	return nil
}

// stepHarness holds a started turn on a config with k profiles per
// provider, ready for OnOutcome.
type stepHarness struct {
	cfg      policy.Config
	profiles map[string]policy.ProfileState
	st       policy.TurnState
	now      int64
}

func newStepHarness(k int) (*stepHarness, error) {
	l, err := loadConfig(k)
	if err != nil {
		return nil, err
	}
	h := &stepHarness{cfg: l.Policy, profiles: map[string]policy.ProfileState{},
		now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixMilli()}
	sel, err := h.cfg.Select(policy.SessionState{}, policy.SelectRequest{Now: h.now})
	if err != nil {
		return nil, err
	}
	d, err := policy.StartTurn(sel, h.env(), policy.StartInput{TurnID: "t1", Session: "s1", Chat: "direct", Seed: 1})
	if err != nil {
		return nil, err
	}
	w := policy.NewWorld(h.st, h.env())
	w.Fold(d.Events...)
	h.st = w.Turn()
	return h, nil
}

func (h *stepHarness) env() policy.Env {
	return policy.Env{Config: &h.cfg, Profiles: h.profiles, Now: h.now}
}

// rateLimit is the outcome decided in the scaling figures: a 429 on the
// first profile (cooldown, then rotation to the next profile; with one
// profile per provider, the retry wait or fallback the policy picks).
var rateLimit = policy.Outcome{Reason: policy.ReasonRateLimit, Status: 429, LatencyMs: 300,
	Error:    events.ProviderErrorRecord{Status: 429, MessagePreview: "rate limited", Hash: "sha256:00"},
	Evidence: events.Evidence{Rule: "status.429", Source: "status"}}

func (h *stepHarness) decide() error {
	d, err := policy.OnOutcome(h.st, h.env(), rateLimit)
	if err == nil && len(d.Events) == 0 {
		err = fmt.Errorf("empty decision (next %s)", d.Next.Kind)
	}
	return err
}

// measureSteps returns the mean wall time of one OnOutcome(rate limit)
// decision with k profiles per provider: the best of 5 batches of d/5
// each (preemption by other processes filtered out).
func measureSteps(k int, d time.Duration) (time.Duration, error) {
	h, err := newStepHarness(k)
	if err != nil {
		return 0, err
	}
	best := time.Duration(1<<63 - 1)
	for range 5 {
		n := 0
		start := time.Now()
		for time.Since(start) < d/5 {
			for range 64 {
				if err := h.decide(); err != nil {
					return 0, err
				}
			}
			n += 64
		}
		best = min(best, time.Since(start)/time.Duration(n))
	}
	return best, nil
}

// startCPUProfile starts a CPU profile written to path ("" = none) and
// returns the function that stops it and closes the file.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("rebuild profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("rebuild profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("rebuild profile: %w", err)
		}
		return nil
	}, nil
}

// processCPU is the CPU time (user + system) this process has used so
// far: the CPU a phase costs, which a shared machine's load changes far
// less than its wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perEvent formats d per event in µs with two decimals.
func perEvent(d time.Duration, events int) string {
	return fmt.Sprintf("%.2f", float64(d.Microseconds())/float64(max(events, 1)))
}
