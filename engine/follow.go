package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/fledger/fledger/events"
)

// ownCommit is a commit this engine appended, waiting in state.own for the
// commits before it.
type ownCommit struct {
	subject string
	evs     []events.Event
}

// follow starts following the stream to keep s current ([events.Store]
// Follow). It reads the whole stream, not only fledger.<agent>.>, so that
// every stream sequence is seen: that is what lets the engine fold its own
// commit the moment it is acknowledged when nothing unknown lies before it
// (applyOwn), and keeps the state the fold of a stream prefix. Other
// agents' commits are not decoded, nor the engine's own ones folded
// already. It returns at once; an error that ends following fails the
// state (its waiters return it); stop ends it.
//
// The store recovers a consumer that stands still while the stream has
// moved on (its watchdog, docs/engine.md), so a fold waited for is not
// held up by a cluster node killed while it hosted the consumer.
func (s *state) follow(st events.Store) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{cancel: cancel, done: make(chan struct{})}
	// Read under the lock: the engine's own commits may be folded
	// (applyOwn) while the follower starts.
	s.mu.RLock()
	from := s.applied + 1
	s.mu.RUnlock()
	// The store's consumer keeps the options' functions until its
	// subscription has wound down, which may be a while after stop
	// returns: they reach the state through ref, which stop clears, so a
	// closed engine's state is garbage as soon as Close returns.
	ref := &stateRef{}
	ref.p.Store(s)
	prefix := s.prefix
	f.ref = ref
	go func() {
		defer close(f.done)
		opts := events.FollowOptions{From: from, Decode: func(subject string) bool { return mine(prefix, subject) }, Skip: ref.folded}
		for c, err := range st.Follow(ctx, opts) {
			if err != nil {
				s.fail(fmt.Errorf("engine: follow %s: %w", s.agent, err))
				return
			}
			if !s.applyFollowed(c) {
				continue
			}
			if s.afterApply != nil {
				s.afterApply(c.Seq)
			}
		}
	}()
	return f
}

// applyFollowed folds one commit as Follow delivered it (the follower's
// and FoldTo's one way): a gap is no commit (false: the next one moves
// the position on), a message that does not decode is counted.
func (s *state) applyFollowed(c events.StoredCommit) bool {
	if c.Err != nil && c.Err.Gap() {
		return false
	}
	var derr error
	if c.Err != nil {
		derr = c.Err
	}
	s.apply(c.Seq, c.Subject, c.Events, derr)
	return true
}

// follower is the goroutine following the stream for a state.
type follower struct {
	cancel context.CancelFunc
	done   chan struct{}
	ref    *stateRef
}

// stop ends following and waits for the goroutine to return.
func (f *follower) stop() {
	f.cancel()
	<-f.done
	f.ref.p.Store(nil)
}

// stateRef is the follower's state while it follows (nil once stopped).
type stateRef struct{ p atomic.Pointer[state] }

// folded reports whether the commit at seq is folded already (the engine's
// own, folded when it was acknowledged): it need not be decoded again.
// Once following stopped every commit is skipped: nothing folds it.
func (r *stateRef) folded(seq uint64) bool {
	s := r.p.Load()
	if s == nil {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return seq <= s.applied
}

// mine reports whether subject belongs to the state's agent.
func (s *state) mine(subject string) bool { return mine(s.prefix, subject) }

// mine reports whether subject is under prefix ("fledger.<agent>.").
func mine(prefix, subject string) bool {
	return len(subject) > len(prefix) && subject[:len(prefix)] == prefix
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
