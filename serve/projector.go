package serve

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// projector keeps the projection database caught up with the stream: a
// background catch-up every interval, and on demand before a read. One
// catch-up runs at a time (a Projector is not safe for concurrent use).
type projector struct {
	db    *projections.DB
	src   events.Store
	log   *slog.Logger
	mu    sync.Mutex
	p     *projections.Projector
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
	ctx   context.Context
	abort context.CancelFunc

	every time.Duration
	// health: the last catch-up error and since when catch-ups fail; the
	// checkpoint last seen advancing and when (guarded by hmu, not mu, so
	// a health check never waits for a running catch-up).
	hmu          sync.Mutex
	lastErr      error
	failingSince time.Time
	lastCP       uint64
	advancedAt   time.Time
}

func startProjector(db *projections.DB, src events.Store, every time.Duration, log *slog.Logger) *projector {
	ctx, cancel := context.WithCancel(context.Background())
	p := &projector{db: db, src: src, log: log, p: projections.NewProjector(db, projections.WithSkipUnknown(true)),
		quit: make(chan struct{}), done: make(chan struct{}), ctx: ctx, abort: cancel,
		every: every, advancedAt: time.Now()}
	go p.loop(every)
	return p
}

func (p *projector) loop(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	failures := catchUpLog{log: p.log}
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			if _, err := p.catchUp(p.ctx); p.ctx.Err() == nil {
				failures.note(time.Now(), err)
			}
		}
	}
}

// catchUp folds the stream up to its last sequence and returns the
// checkpoint reached.
func (p *projector) catchUp(ctx context.Context) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	to, err := p.src.LastSeq(ctx, "")
	if err != nil {
		p.record(0, false, err)
		return 0, err
	}
	if cp, err := p.db.Checkpoint(ctx); err == nil && cp >= to {
		p.record(cp, true, nil)
		return cp, nil
	}
	res, err := p.p.CatchUp(ctx, p.src, to)
	p.record(res.To, res.To >= to, err)
	return res.To, err
}

// record notes a catch-up's result for the health check: caught up (to
// the stream's end when it began) counts as advancing.
func (p *projector) record(cp uint64, caughtUp bool, err error) {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	now := time.Now()
	if err != nil && !errors.Is(err, context.Canceled) {
		if p.lastErr == nil {
			p.failingSince = now
		}
		p.lastErr = err
		return
	}
	p.lastErr = nil
	if cp > p.lastCP || caughtUp {
		p.lastCP, p.advancedAt = max(cp, p.lastCP), now
	}
}

// failing is the last catch-up's error and how long catch-ups have failed
// (nil when the last one succeeded).
func (p *projector) failing() (error, time.Duration) {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	if p.lastErr == nil {
		return nil, 0
	}
	return p.lastErr, time.Since(p.failingSince)
}

// stalled reports whether the projections, lag messages behind, have not
// advanced for several catch-up intervals (at least 5 s).
func (p *projector) stalled(lag uint64) bool {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	return lag > 0 && time.Since(p.advancedAt) > max(10*p.every, 5*time.Second)
}

func (p *projector) checkpoint(ctx context.Context) uint64 {
	cp, err := p.db.Checkpoint(ctx)
	if err != nil {
		p.log.Warn("projections: checkpoint", "err", err)
	}
	return cp
}

// stop ends the loop after the batch in progress and runs one last
// catch-up, both bounded by ctx (then the running batch is abandoned: it
// rolls back, and its events are folded on the next start).
func (p *projector) stop(ctx context.Context) {
	p.once.Do(func() {
		close(p.quit)
		stopAbort := context.AfterFunc(ctx, p.abort)
		defer stopAbort()
		select {
		case <-p.done:
		case <-ctx.Done():
			p.abort()
			<-p.done
		}
		if _, err := p.catchUp(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("projections: final catch-up", "err", err)
		}
		p.abort()
	})
}
