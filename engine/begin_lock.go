package engine

import "sync"

// beginLocks order, inside one engine, the begins of one turn id: a begin
// records its model selection, then the turn's start, in two commits, and
// a second begin of the same new id decided between them would find no
// turn yet and record its own selection before it is refused (a refused
// begin must record nothing). Holding the id from the look-up to the
// start, the second begin finds the turn the first started (folded before
// the first releases it) and appends nothing. Begins of other ids never
// wait; other engines are ordered by the guards (docs/engine.md: a loser
// of two instances' race can still record its selection).
type beginLocks struct {
	mu sync.Mutex
	m  map[string]*beginLock
}

type beginLock struct {
	mu sync.Mutex
	n  int // begins holding or waiting for it: the entry goes at 0
}

// lockFor holds req's turn id until the returned release is called, for
// a begin that records a selection; a begin without one records nothing
// before its start, which the turn subject's guard orders (no lock).
func (l *beginLocks) lockFor(req TurnRequest) (release func()) {
	if req.Select == nil {
		return func() {}
	}
	return l.lock(req.TurnID)
}

// lock holds turn id id until the returned release is called.
func (l *beginLocks) lock(id string) (release func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*beginLock{}
	}
	b := l.m[id]
	if b == nil {
		b = &beginLock{}
		l.m[id] = b
	}
	b.n++
	l.mu.Unlock()
	b.mu.Lock()
	return func() {
		b.mu.Unlock()
		l.mu.Lock()
		if b.n--; b.n == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
}

// held is how many turn ids have begins holding or waiting (tests).
func (l *beginLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
