package engine

import (
	"sync"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// profileLocks order, inside one engine, the outcome decisions that change
// one auth profile's failure state, so that they are decided on a state
// that already holds each other's commits instead of conflicting on the
// profile's guard and deciding again:
//
//   - a failure (it may count against the profile) holds the profile
//     exclusively, from its decision until its commit is folded;
//   - a success on a profile that has failure state (it resets it: a
//     ProfileSucceeded) holds it shared: resets never conflict with each
//     other, only with failures;
//   - a success on a clean profile (a ProfileUsed, which commutes with
//     everything) holds nothing.
//
// Only decisions on the same profile wait for each other; other turns,
// and every success on a clean profile, never do. Other engines are
// ordered by the guards as before (docs/engine.md).
type profileLocks struct {
	mu sync.Mutex
	m  map[string]*sync.RWMutex
}

func (l *profileLocks) get(id string) *sync.RWMutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*sync.RWMutex{}
	}
	mu := l.m[id]
	if mu == nil {
		mu = &sync.RWMutex{}
		l.m[id] = mu
	}
	return mu
}

// lockOutcome takes what an outcome decision on profile id needs (see
// profileLocks) and returns its release.
func (e *Engine) lockOutcome(id string, ok bool) func() {
	if id == "" {
		return func() {}
	}
	mu := e.plocks.get(id)
	if !ok {
		mu.Lock()
		return mu.Unlock
	}
	e.st.mu.RLock()
	dirty := e.st.profiles[id].HasFailureState()
	e.st.mu.RUnlock()
	if !dirty {
		return func() {}
	}
	mu.RLock()
	return mu.RUnlock
}

// commitUnder runs commit with a profile lock lockOutcome took and
// releases it however commit ends, a panic included.
func (e *Engine) commitUnder(unlock func(), commit func() (policy.Decision, []events.Event, error)) (policy.Decision, []events.Event, error) {
	defer unlock()
	return commit()
}
