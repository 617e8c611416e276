package events

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReadRange is [Store.Read] bounded by a last sequence, for long reads of
// the whole stream (a projection rebuild): it yields the events of the
// messages from..to (to 0 or beyond the stream's end = its last sequence
// when the read starts), with the same errors as Read (a *DecodeError per
// undecodable message, one wrapping ErrGap per missing run). The messages
// come from an ordered consumer, which the server delivers without
// building a header per message as it does for Read's direct gets: about
// twice Read's rate on a long stream (docs/performance.md), for one
// consumer create per read; should the consumer stall, the rest comes
// from direct gets. They are decoded ahead on GOMAXPROCS workers like
// Read's.
func (s *store) ReadRange(ctx context.Context, from, to uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.isClosed() {
			yield(Event{}, ErrClosed)
			return
		}
		// A stream created continuing an archived one (WithFirstSeq) starts
		// past 1: what lies before is no gap, as for Read.
		from = s.readStart(from)
		last, err := s.LastSeq(ctx, "")
		if err != nil {
			yield(Event{}, err)
			return
		}
		if to == 0 || to > last {
			to = last
		}
		if from > to {
			return
		}
		y := eventYielder{yield: yield}
		err = s.decodeAhead(ctx, func(ctx context.Context, fn func(uint64, string, []byte) bool) error {
			return s.scanOrdered(ctx, from, to, fn)
		}, gapChecked(from, y.msg))
		if err != nil && !y.stopped {
			yield(Event{}, err)
		}
	}
}

// scanOrdered calls fn with each message from..to (to ≤ the stream's last
// sequence) in order, read with an ordered consumer, until fn returns
// false or to is reached. A consumer that stalls — no first message
// within firstMsgWait, or none for the store's timeout after it (noticed
// within two, see stallGuard) — is given up: the rest is read with
// direct gets (scanRestDirect).
func (s *store) scanOrdered(ctx context.Context, from, to uint64, fn func(seq uint64, subject string, data []byte) bool) error {
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
	})
	if err != nil {
		return fmt.Errorf("events: read from sequence %d: %w", from, consumerLimitErr("read", err))
	}
	defer s.dropOrdered(cons) // after the iterator's Stop (deferred below)
	// A short range (a turn's commits) asks for no more than it reads.
	it, err := cons.Messages(jetstream.PullMaxMessages(int(min(uint64(readBatch), to-from+1))))
	if err != nil {
		return fmt.Errorf("events: read from sequence %d: %w", from, consumerLimitErr("read", err))
	}
	defer it.Stop()
	// A done ctx stops the iterator, which ends a Next waiting for the
	// server; so does a stall: no first message within firstMsgWait, or
	// none for the store's timeout after it.
	defer context.AfterFunc(ctx, it.Stop)()
	stall := newStallGuard(min(s.cfg.timeout, firstMsgWait), it.Stop)
	defer stall.stop()
	for next := from; next <= to; {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				// Reported here, not left to decodeAhead: with one worker it
				// returns this result as it is, and a cancelled read must
				// not end as a whole one.
				return fmt.Errorf("events: read after sequence %d: %w", next-1, ctx.Err())
			}
			if stall.fired() {
				// The consumer stopped delivering (on a cluster its first
				// message sometimes never comes): the rest is read with
				// direct gets, which any replica answers.
				s.stalls.note(s.cfg.logger, next, next == from)
				return s.scanRestDirect(ctx, next, to, fn)
			}
			return fmt.Errorf("events: read from sequence %d: %w", next, consumerLimitErr("read", err))
		}
		if next == from {
			stall.every(s.cfg.timeout)
		}
		stall.progress()
		meta, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("events: read from sequence %d: %w", next, err)
		}
		seq := meta.Sequence.Stream
		if seq > to {
			return nil
		}
		if !fn(seq, m.Subject(), m.Data()) {
			return nil
		}
		next = seq + 1
	}
	return nil
}

// firstMsgWait bounds the wait for an ordered read's first message before
// it goes on with direct gets: a consumer that delivers sends its first
// message within milliseconds, and one that does not (seen on a 3-node
// cluster for 2–7% of reads) would otherwise hold the read, and the
// request behind it, for the whole store timeout.
var firstMsgWait = 2 * time.Second

// scanRestDirect is scanOrdered's way on after its consumer stalled: the
// messages from..to with direct gets ([store.scan]). A read that fails
// there too is the store's unavailability (a 503 with Retry-After to an
// API client), not an error of the ledger.
func (s *store) scanRestDirect(ctx context.Context, from, to uint64, fn func(seq uint64, subject string, data []byte) bool) error {
	err := s.scan(ctx, from, "", readBatch, func(seq uint64, subj string, m *nats.Msg) bool {
		return seq <= to && fn(seq, subj, m.Data) && seq < to
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
		return &UnavailableError{Op: "read", Outcome: NotStored, Attempts: 1,
			Err: fmt.Errorf("the ordered consumer from sequence %d stalled, and direct gets failed: %w", from, err)}
	}
	return err
}

// stallGuard calls abort once no message arrived for a whole timeout:
// the bound of NextMaxWait on each Next, without the two timers and the
// option NextMaxWait costs per message (a rebuild reads hundreds of
// thousands). progress is an atomic add; the timer checks it every
// timeout, so a stall is noticed after one to two timeouts.
type stallGuard struct {
	n      atomic.Uint64
	hit    atomic.Bool
	mu     sync.Mutex
	last   uint64
	t      *time.Timer
	d      time.Duration
	abort  func()
	halted bool
}

func newStallGuard(d time.Duration, abort func()) *stallGuard {
	g := &stallGuard{d: d, abort: abort}
	g.mu.Lock()
	g.t = time.AfterFunc(d, g.check)
	g.mu.Unlock()
	return g
}

func (g *stallGuard) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.halted {
		return
	}
	if n := g.n.Load(); n != g.last {
		g.last = n
		g.t.Reset(g.d)
		return
	}
	g.hit.Store(true)
	g.abort()
}

func (g *stallGuard) progress() { g.n.Add(1) }

// every makes d the stall timeout from the next check on.
func (g *stallGuard) every(d time.Duration) {
	g.mu.Lock()
	g.d = d
	g.mu.Unlock()
}
func (g *stallGuard) fired() bool { return g.hit.Load() }

func (g *stallGuard) stop() {
	g.mu.Lock()
	g.halted = true
	g.t.Stop()
	g.mu.Unlock()
}
