package events

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// followPull is how many messages one pull of a follower asks for.
const followPull = 512

// stallRestart is how long a follower may yield nothing before it asks
// the stream leader whether the stream has moved on (and, if it has,
// recreates its consumer); stallCheck is how often it looks.
const (
	stallRestart = 3 * time.Second
	stallCheck   = 500 * time.Millisecond
	// followIdentityCheck is how often a follower makes sure the stream
	// is still the one its store opened (store.replaced).
	followIdentityCheck = 5 * time.Second
)

// Follow implements [Store]: an ordered consumer on the whole stream,
// consumed in pulls of [followPull] with the followers' heartbeat and
// expiry (followConsumeOpts). Messages are decoded on the consumer's
// goroutine, ahead of the caller, and yielded in stream order.
//
// A watchdog recreates a consumer that stands still: while nothing was
// yielded for [stallRestart] it asks the stream leader for the stream's
// last sequence, and when the stream holds more than was yielded it
// creates a new ordered consumer from the next sequence. An ordered
// consumer whose server died (a cluster node killed while it hosted the
// consumer) is otherwise not always recreated until that node comes back.
func (s *store) Follow(ctx context.Context, opts FollowOptions) iter.Seq2[StoredCommit, error] {
	return func(yield func(StoredCommit, error) bool) {
		if s.isClosed() {
			yield(StoredCommit{}, ErrClosed)
			return
		}
		f := &follower{s: s, opts: opts, next: s.readStart(opts.From),
			ch: make(chan followed, followPull), quit: make(chan struct{})}
		defer f.stop()
		if err := f.start(ctx); err != nil {
			yield(StoredCommit{}, err)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if err := f.run(ctx, yield); err != nil {
			yield(StoredCommit{}, err)
		}
	}
}

// start creates the first consumer, asking again every [stallCheck]
// while it cannot be made for a reason that passes (the node the client
// was connected to died, an election, a reconnect): following starts late
// rather than failing for good. Only a stream that is gone, the store's
// Close and ctx end it (ctx with a nil error).
func (f *follower) start(ctx context.Context) error {
	for failures := 0; ; failures++ {
		actx, cancel := context.WithTimeout(ctx, DefaultAttemptTimeout)
		err := f.restart(actx)
		cancel()
		f.s.noteFollow(err)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return err
		}
		if failures%20 == 0 {
			f.s.logger().Warn("events: follow: the stream consumer cannot be created yet; asking again", "from", f.next, "failures", failures+1, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.s.closed:
			return ErrClosed
		case <-time.After(stallCheck):
		}
	}
}

// followed is one message a follower's consumer delivered, decoded, or a
// consumer error that ends following (err).
type followed struct {
	gen uint64 // the consumer generation that delivered it
	c   StoredCommit
	err error
}

// follower is one Follow: its current consumer and its watchdog state.
type follower struct {
	s    *store
	opts FollowOptions
	next uint64 // the next sequence to yield: a jump is a gap (deletes are denied)
	ch   chan followed
	quit chan struct{} // closed when the iteration ends

	mu       sync.Mutex
	gen      uint64 // generation of the current consumer
	cons     jetstream.Consumer
	cc       jetstream.ConsumeContext
	restarts atomic.Uint64
}

// followStarted, when set (by tests), is called with each follower once
// its first consumer runs.
var followStarted atomic.Pointer[func(*follower)]

// restart creates an ordered consumer from f.next and stops the previous
// one; messages the previous one still delivers are dropped.
func (f *follower) restart(ctx context.Context) error {
	f.mu.Lock()
	f.gen++
	gen := f.gen
	f.mu.Unlock()
	cons, err := f.s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: f.next,
	})
	if err != nil {
		return fmt.Errorf("events: follow from sequence %d: %w", f.next, followErr(err))
	}
	opts := append([]jetstream.PullConsumeOpt{jetstream.PullMaxMessages(followPull),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				f.send(followed{gen: gen, err: fmt.Errorf("events: follow: %w", err)})
			}
		})}, followConsumeOpts()...)
	cc, err := cons.Consume(func(m jetstream.Msg) { f.deliver(gen, m) }, opts...)
	if err != nil {
		return fmt.Errorf("events: follow from sequence %d: %w", f.next, followErr(err))
	}
	f.mu.Lock()
	first, old, oldCons := f.cc == nil, f.cc, f.cons
	f.cons, f.cc = cons, cc
	f.mu.Unlock()
	if old != nil {
		// Stopping an ordered consumer waits while it is being recreated
		// inside the client (a lost server: up to a request timeout and a
		// back-off); its messages are dropped (gen) and the caller must
		// not wait for it.
		f.s.stopAndDrop(old.Stop, oldCons)
	}
	if hook := followStarted.Load(); first && hook != nil {
		(*hook)(f)
	}
	return nil
}

// deliver decodes m (when it is selected and not skipped) and hands it
// to run.
func (f *follower) deliver(gen uint64, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		f.send(followed{gen: gen, err: fmt.Errorf("events: follow: %w", err)})
		return
	}
	if meta.Sequence.Consumer == 1 {
		// The first delivery of a consumer made (again): by the client
		// after a reset, possibly on a stream of the same name created
		// since (a rotation). Checked before anything of it is folded.
		if err := f.s.replacedNow(context.Background()); err != nil {
			f.send(followed{gen: gen, err: fmt.Errorf("events: follow: %w", err)})
			return
		}
	}
	c := StoredCommit{Seq: meta.Sequence.Stream, Subject: m.Subject()}
	if (f.opts.Decode == nil || f.opts.Decode(c.Subject)) && (f.opts.Skip == nil || !f.opts.Skip(c.Seq)) {
		evs, err := f.s.reg.DecodeCommit(m.Data(), c.Seq, c.Subject)
		c.Events, c.Err = evs, asDecodeError(err, c.Seq, c.Subject, len(m.Data()))
	}
	f.send(followed{gen: gen, c: c})
}

// send hands one delivery to run, unless the iteration has ended.
func (f *follower) send(d followed) {
	select {
	case f.ch <- d:
	case <-f.quit:
	}
}

// asDecodeError is err as a *DecodeError (nil for nil).
func asDecodeError(err error, seq uint64, subject string, size int) *DecodeError {
	if err == nil {
		return nil
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return de
	}
	return &DecodeError{Seq: seq, Subject: subject, Size: size, Index: -1, Err: err}
}

// run yields what the consumers deliver, in order, and watches for a
// consumer that stands still. It returns nil when ctx ends or the caller
// stops, else the error that ends following.
func (f *follower) run(ctx context.Context, yield func(StoredCommit, error) bool) error {
	t := time.NewTicker(stallCheck)
	defer t.Stop()
	since := time.Now() // when something was last yielded (or checked)
	var suspect uint64  // the stream's last sequence when a stall was first seen (0: none)
	identified := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.s.closed:
			return ErrClosed
		case <-t.C:
			if time.Since(identified) >= followIdentityCheck {
				// The ordered consumer makes itself again on a stream of
				// the same name created since (removed and made again: a
				// rotation), going on where it stopped: following ends
				// there instead of folding another ledger's commits.
				identified = time.Now()
				if err := f.s.replacedNow(ctx); err != nil {
					return fmt.Errorf("events: follow: %w", err)
				}
			}
			if len(f.ch) > 0 || time.Since(since) < stallRestart {
				continue
			}
			retry, err := f.checkStalled(ctx, time.Since(since), &suspect)
			if err != nil {
				return err
			}
			if !retry {
				since = time.Now()
			}
		case d := <-f.ch:
			f.mu.Lock()
			current := d.gen == f.gen
			f.mu.Unlock()
			if !current {
				continue // from a consumer replaced since
			}
			if d.err != nil {
				return d.err
			}
			if d.c.Seq < f.next {
				continue
			}
			if d.c.Seq > f.next {
				gap := StoredCommit{Seq: f.next, Err: &DecodeError{Seq: f.next, Through: d.c.Seq - 1, Index: -1, Err: ErrGap}}
				if !yield(gap, nil) {
					return nil
				}
			}
			f.next = d.c.Seq + 1
			if !yield(d.c, nil) {
				return nil
			}
			since, suspect = time.Now(), 0
		}
	}
}

// checkStalled asks the stream leader for the stream's last sequence and
// recreates the consumer from f.next when the stream held more than was
// yielded at the previous check too (*suspect: a commit stored just
// before the first look may still be on its way, and recreating the
// consumer for it was a false alarm). A stream that is gone ends following
// (the error); any other failure (an election, a lost connection) is only
// logged, and asked again later: at the next check when a stall is
// suspected or recreating failed (retry), else after another stallRestart.
func (f *follower) checkStalled(ctx context.Context, stalled time.Duration, suspect *uint64) (retry bool, err error) {
	actx, cancel := context.WithTimeout(ctx, DefaultAttemptTimeout)
	defer cancel()
	last, err := f.s.leaderLast(actx, "")
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, fmt.Errorf("events: follow: %w", err)
	}
	if err != nil || last < f.next {
		*suspect = 0
		return false, nil
	}
	if *suspect == 0 {
		*suspect = last
		return true, nil
	}
	*suspect = 0
	err = f.restart(actx)
	f.restarts.Add(1)
	f.s.logger().Warn("events: the stream consumer stood still while the stream moved on; recreated it",
		"from", f.next, "stream_last", last, "stalled", stalled.Round(time.Millisecond), "err", err)
	return err != nil, nil
}

// stop ends the iteration: a consumer goroutine blocked on handing over
// a message returns, and the current consumer is told to stop, in the
// background: the client's Stop waits while it recreates the consumer
// (see restart), and the iteration (a command ending on Ctrl-C) must not.
func (f *follower) stop() {
	close(f.quit)
	f.mu.Lock()
	cc, cons := f.cc, f.cons
	f.mu.Unlock()
	if cc != nil {
		f.s.stopAndDrop(cc.Stop, cons)
	}
}

// logger is the store's logger ([WithLogger]), or slog's default.
func (s *store) logger() *slog.Logger {
	if s.cfg.logger != nil {
		return s.cfg.logger
	}
	return slog.Default()
}

// followErr names [ErrConsumerLimit] in a follower's consumer-creation
// error when that is the cause (the follower asks again: no outage
// wrapping); any other err is returned as it is.
func followErr(err error) error {
	if isConsumerLimit(err) {
		return fmt.Errorf("%w: %w", ErrConsumerLimit, err)
	}
	return err
}
