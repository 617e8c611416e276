package engine

import (
	"context"
	"fmt"

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
func (s *state) follow(ctx context.Context, st events.Store, reg *events.Registry) (stop func(), err error) {
	js, err := jetstream.New(st.Conn())
	if err != nil {
		return nil, fmt.Errorf("engine: jetstream: %w", err)
	}
	stream, err := js.Stream(ctx, events.StreamName)
	if err != nil {
		return nil, fmt.Errorf("engine: stream %s: %w", events.StreamName, err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: watch %s: %w", s.agent, err)
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
		evs, derr := reg.DecodeCommit(m.Data(), seq, subj)
		s.apply(seq, subj, evs, derr)
	}, append([]jetstream.PullConsumeOpt{jetstream.PullMaxMessages(512)}, events.FollowConsumeOpts()...)...)
	if err != nil {
		return nil, fmt.Errorf("engine: watch %s: %w", s.agent, err)
	}
	return cc.Stop, nil
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
