package engine

import (
	"container/list"
	"context"
	"errors"
	"iter"
	"slices"
	"sync"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Reading a turn back from the stream (turnLog) is a subject read and a
// range read from the turn's start: tens of milliseconds on a long
// stream. A finished turn never changes (its log stops at the commit
// that ends it), so what the step API answers about one is kept once
// read; concurrent lookups of one id share a read; and at most
// maxStreamLookups range reads run at once per engine, so a burst of
// lookups of old turns cannot starve live decisions of the store.
const (
	// lookupCacheTurns bounds the finished turns' summaries kept after a
	// read (least recently used first out). It is not part of the
	// snapshot: a new engine reads them again.
	lookupCacheTurns = 1024
	// maxStreamLookups bounds the range reads of turn logs running at
	// once (an engine's lookups of turns it does not hold).
	maxStreamLookups = 4
	// farTurnStart is how far behind the applied sequence a turn's start
	// makes its read one of those bounded reads, even for a turn still
	// open (one a gateway left waiting or in flight long ago): the read
	// spans every commit since.
	farTurnStart = 1024
)

// turnSummary is what the step API answers about a turn, taken from its
// log: its state after the last commit (compact once finished, as the
// fold keeps a finished turn), the last decision's next step, and the
// first recorded outcome of each attempt with the next step decided then.
// A Next's WaitMs counts from its decision ([Engine.replayed] makes it
// count from now).
type turnSummary struct {
	state    policy.TurnState
	last     policy.Next
	outcomes []attemptOutcome
	// started is the turn's TurnStarted (a re-sent begin is compared
	// with it, beginMismatch); lastSeq the sequence of its last commit.
	started events.TurnStarted
	lastSeq uint64
}

// attemptOutcome is an attempt's first recorded outcome.
type attemptOutcome struct {
	attempt int
	ok      bool
	// failed is the failure as recorded (AttemptFailed), compared with a
	// re-sent report (sameFailure).
	failed events.AttemptFailed
	next   policy.Next
}

// summarize is the summary of log (nil when empty).
func (e *Engine) summarize(log []turnCommit) *turnSummary {
	if len(log) == 0 {
		return nil
	}
	lastC := &log[len(log)-1]
	s := &turnSummary{state: lastC.after, last: e.nextOf(lastC), lastSeq: lastC.seq}
	for _, ev := range log[0].events {
		if ts, ok := ev.Data.(events.TurnStarted); ok {
			s.started = ts
			break
		}
	}
	if finishedPhase(s.state.Phase) {
		s.state = compactTurn(s.state)
	}
	for i := range log {
		c := &log[i]
		for _, ev := range c.events {
			var o attemptOutcome
			switch p := ev.Data.(type) {
			case events.AttemptFailed:
				o = attemptOutcome{attempt: p.Attempt, failed: p}
			case events.AttemptSucceeded:
				o = attemptOutcome{attempt: p.Attempt, ok: true}
			default:
				continue
			}
			if _, seen := s.outcome(o.attempt); !seen {
				o.next = e.nextOf(c)
				s.outcomes = append(s.outcomes, o)
			}
		}
	}
	return s
}

// outcome is attempt's first recorded outcome, if any.
func (s *turnSummary) outcome(attempt int) (attemptOutcome, bool) {
	for _, o := range s.outcomes {
		if o.attempt == attempt {
			return o, true
		}
	}
	return attemptOutcome{}, false
}

// nextOf is the Next the decision c returned, with the config it ran
// under.
func (e *Engine) nextOf(c *turnCommit) policy.Next {
	return nextOf(c, e.turnConfig(c.after.ConfigHash))
}

// turnHistory is turn id's summary (nil: no such turn up to the applied
// sequence). A finished turn's comes from the lookups (kept, shared,
// bounded); a live one's is read now.
func (e *Engine) turnHistory(ctx context.Context, id string, finished bool) (*turnSummary, error) {
	if finished {
		return e.lookups.get(ctx, id, e.readTurn)
	}
	log, _, err := e.turnLog(ctx, id, false)
	if err != nil {
		return nil, err
	}
	return e.summarize(log), nil
}

// readTurn reads turn id's log for the lookups: its summary, and whether
// the turn has ended (its summary may then be kept).
func (e *Engine) readTurn(ctx context.Context, id string) (*turnSummary, bool, error) {
	log, ended, err := e.turnLog(ctx, id, true)
	if err != nil {
		return nil, false, err
	}
	return e.summarize(log), ended, nil
}

// rangeReader is a store with a bounded ordered read
// (events.Store's ReadRange on JetStream).
type rangeReader interface {
	ReadRange(ctx context.Context, from, to uint64) iter.Seq2[events.Event, error]
}

// readTurnRange yields the stream from from (a turn's start) on, bounded
// to upTo when the store reads ranges (an ordered consumer, cheaper than
// direct gets for an old turn far behind the stream's end); a live turn
// (old = false) reads with direct gets.
func (e *Engine) readTurnRange(ctx context.Context, from, upTo uint64, old bool) iter.Seq2[events.Event, error] {
	if r, ok := e.store.(rangeReader); ok && old {
		return r.ReadRange(ctx, from, upTo)
	}
	return e.store.Read(ctx, from)
}

// turnLookups keeps finished turns' summaries (a bounded LRU), coalesces
// concurrent reads of one id and bounds the reads running at once.
type turnLookups struct {
	sem chan struct{}

	mu      sync.Mutex
	max     int
	kept    map[string]*list.Element // of *keptTurn, in order
	order   *list.List               // most recently used first
	flights map[string]*flight
}

type keptTurn struct {
	id  string
	sum *turnSummary
}

// flight is a read of one id in progress: done is closed when sum and err
// are set; waiters counts the lookups waiting for it.
type flight struct {
	done    chan struct{}
	waiters int
	sum     *turnSummary
	err     error
}

func newTurnLookups(keep, reads int) *turnLookups {
	return &turnLookups{sem: make(chan struct{}, reads), max: keep, kept: map[string]*list.Element{},
		order: list.New(), flights: map[string]*flight{}}
}

// acquire takes one of the range reads (release with release).
func (l *turnLookups) acquire(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *turnLookups) release() { <-l.sem }

// get returns id's kept summary, else waits for a read of id in
// progress, else reads it with read, keeping the summary of a turn that
// ended. A read that ended with its own caller's context is retried by a
// waiter whose context is alive.
func (l *turnLookups) get(ctx context.Context, id string, read func(context.Context, string) (*turnSummary, bool, error)) (*turnSummary, error) {
	for {
		l.mu.Lock()
		if el, ok := l.kept[id]; ok {
			l.order.MoveToFront(el)
			l.mu.Unlock()
			return el.Value.(*keptTurn).sum, nil
		}
		if f, ok := l.flights[id]; ok {
			f.waiters++
			l.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if f.err != nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) && ctx.Err() == nil {
				continue
			}
			return f.sum, f.err
		}
		f := &flight{done: make(chan struct{})}
		l.flights[id] = f
		l.mu.Unlock()

		sum, ended, err := read(ctx, id)
		l.mu.Lock()
		delete(l.flights, id)
		if err == nil && ended && sum != nil {
			l.keep(id, sum)
		}
		f.sum, f.err = sum, err
		l.mu.Unlock()
		close(f.done)
		return sum, err
	}
}

// keep adds id's summary, dropping the least recently used beyond max.
// l.mu is held.
func (l *turnLookups) keep(id string, sum *turnSummary) {
	l.kept[id] = l.order.PushFront(&keptTurn{id: id, sum: sum})
	for l.order.Len() > l.max {
		old := l.order.Back()
		l.order.Remove(old)
		delete(l.kept, old.Value.(*keptTurn).id)
	}
}

// cloneNext copies n's slices, so a Step built from a kept summary
// shares nothing with it.
func cloneNext(n policy.Next) policy.Next {
	n.Notices = slices.Clone(n.Notices)
	n.Attempts = slices.Clone(n.Attempts)
	if n.Call != nil {
		c := *n.Call
		n.Call = &c
	}
	return n
}
