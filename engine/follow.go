package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
)

// ownCommit is a commit this engine appended, waiting in state.own for the
// commits before it.
type ownCommit struct {
	subject string
	evs     []events.Event
}

// follow starts the ordered consumer that keeps s current. It reads the
// whole stream, not only fledger.<agent>.>, so that every stream sequence
// is seen: that is what lets the engine fold its own commit the moment it
// is acknowledged when nothing unknown lies before it (applyOwn), and keeps
// the state the fold of a stream prefix. Other agents' commits are not
// decoded. It returns once the consumer is running; stop ends it.
//
// A watchdog restarts the consumer from the next sequence to fold when the
// fold is wanted further (a waitApplied) but has not moved for
// [stallRestart]: an ordered consumer whose server died (a cluster node
// killed while it hosted the consumer) is otherwise not always recreated
// until that node comes back.
func (s *state) follow(ctx context.Context, st events.Store, reg *events.Registry) (*follower, error) {
	js, err := jetstream.New(st.Conn())
	if err != nil {
		return nil, fmt.Errorf("engine: jetstream: %w", err)
	}
	stream, err := js.Stream(ctx, events.StreamName)
	if err != nil {
		return nil, fmt.Errorf("engine: stream %s: %w", events.StreamName, err)
	}
	f := &follower{s: s, stream: stream, reg: reg, quit: make(chan struct{}), done: make(chan struct{})}
	if err := f.start(ctx, 1); err != nil {
		return nil, err
	}
	go f.watch()
	return f, nil
}

// stallRestart is how long a wanted fold may stand still before the
// consumer is recreated; stallCheck how often the watchdog looks.
const (
	stallRestart = 3 * time.Second
	stallCheck   = 500 * time.Millisecond
)

// follower owns the engine's consumer and its watchdog.
type follower struct {
	s        *state
	stream   jetstream.Stream
	reg      *events.Registry
	mu       sync.Mutex
	cons     jetstream.Consumer
	cc       jetstream.ConsumeContext
	restarts atomic.Uint64
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once
}

// start consumes the stream from sequence from.
func (f *follower) start(ctx context.Context, from uint64) error {
	s := f.s
	cons, err := f.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from,
	})
	if err != nil {
		return fmt.Errorf("engine: watch %s: %w", s.agent, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := m.Metadata()
		if err != nil {
			s.fail(fmt.Errorf("engine: watch: %w", err))
			return
		}
		seq, subj := meta.Sequence.Stream, m.Subject()
		if !s.mine(subj) {
			s.apply(seq, subj, nil, nil)
			return
		}
		s.mu.RLock()
		done := seq <= s.applied
		s.mu.RUnlock()
		if done { // folded already, as the engine's own commit
			return
		}
		evs, derr := f.reg.DecodeCommit(m.Data(), seq, subj)
		s.apply(seq, subj, evs, derr)
	}, append([]jetstream.PullConsumeOpt{jetstream.PullMaxMessages(512)}, events.FollowConsumeOpts()...)...)
	if err != nil {
		return fmt.Errorf("engine: watch %s: %w", s.agent, err)
	}
	f.mu.Lock()
	old := f.cc
	f.cons, f.cc = cons, cc
	f.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	return nil
}

// watch restarts a stalled consumer (see follow).
func (f *follower) watch() {
	defer close(f.done)
	t := time.NewTicker(stallCheck)
	defer t.Stop()
	var last uint64
	since := time.Now()
	for {
		select {
		case <-f.quit:
			return
		case <-t.C:
		}
		f.s.mu.RLock()
		applied, wanted := f.s.applied, f.s.wanted.Load()
		f.s.mu.RUnlock()
		if applied != last || wanted <= applied {
			last, since = applied, time.Now()
			continue
		}
		if time.Since(since) < stallRestart {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), events.DefaultAttemptTimeout)
		err := f.start(ctx, applied+1)
		cancel()
		f.restarts.Add(1)
		slog.Warn("engine: the stream consumer stood still while a fold was waited for; recreated it",
			"agent", f.s.agent, "from", applied+1, "wanted", wanted, "stalled", time.Since(since).Round(time.Millisecond), "err", err)
		since = time.Now()
	}
}

func (f *follower) stop() {
	f.once.Do(func() {
		close(f.quit)
		<-f.done
		f.mu.Lock()
		if f.cc != nil {
			f.cc.Stop()
		}
		f.mu.Unlock()
	})
}

// mine reports whether subject belongs to the state's agent.
func (s *state) mine(subject string) bool {
	return len(subject) > len(s.prefix) && subject[:len(s.prefix)] == s.prefix
}

func (s *state) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	s.changed.Broadcast()
}

// applyOwn folds a commit this engine just appended at seq, decoded from
// the bytes it stored (so it folds exactly as every reader decodes it).
// When the commit directly follows the last one folded it is folded now,
// without waiting for the consumer to deliver it back; otherwise it waits
// in own until the consumer has delivered what lies before it (another
// instance's commits, or this engine's own from other goroutines).
func (s *state) applyOwn(seq uint64, subject string, evs []events.Event) {
	s.mu.Lock()
	switch {
	case seq <= s.applied:
	case seq == s.applied+1:
		s.applyLocked(seq, subject, evs, nil)
	default:
		s.own[seq] = ownCommit{subject: subject, evs: evs}
	}
	s.mu.Unlock()
	s.changed.Broadcast()
}
