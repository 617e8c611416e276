package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
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

// heapSampler tracks the peak of live+unswept heap objects
// (runtime/metrics /memory/classes/heap/objects:bytes), sampled every
// 5 ms. It is the whole process's heap: projector, SQLite (modernc is
// pure Go) and the embedded NATS server together.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapNow() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		t := time.NewTicker(5 * time.Millisecond)
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

func (h *heapSampler) finish() uint64 {
	close(h.stop)
	<-h.done
	return h.peak
}

// rebuildResult is one projection rebuild.
type rebuildResult struct {
	Events    int
	Elapsed   time.Duration
	PerSecond float64
	// BaseHeap is the heap after a GC just before the rebuild, PeakHeap
	// the highest sample during it (bytes).
	BaseHeap, PeakHeap uint64
}

// rebuild folds the whole stream into a fresh projection database in dir
// (projections.Open + Projector.CatchUp, what `fledger replay rebuild`
// does) and samples the heap meanwhile.
func rebuild(ctx context.Context, st events.Store, dir string, last uint64) (rebuildResult, error) {
	db, err := projections.Open(ctx, filepath.Join(dir, "rebuild.sqlite"))
	if err != nil {
		return rebuildResult{}, err
	}
	defer db.Close()
	runtime.GC()
	res := rebuildResult{BaseHeap: heapNow()}
	h := startHeapSampler()
	r, err := projections.NewProjector(db).CatchUp(ctx, st, last)
	res.PeakHeap = h.finish()
	if err != nil {
		return res, err
	}
	res.Events, res.Elapsed = r.Events, r.Elapsed
	res.PerSecond = rate(r.Events, r.Elapsed)
	return res, nil
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
