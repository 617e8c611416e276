package events

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A server that stops storing (a full disk: nats-server then keeps
// refusing the stream's writes until it restarts, however much space is
// freed) answers stream info as before: its connection and leader look
// healthy while every append times out. So the store keeps what its own
// appends say, for health checks ([WriteHealth]).

// WriteStatus is what a store's recent appends say about its writes.
type WriteStatus struct {
	// Failures counts the appends that failed with an [UnavailableError]
	// (not confirmed, or the store unavailable, for the whole retry time)
	// since the server last answered one; 0 when it answered the last. FailingSince is when the first of them
	// ended, LastFailure when the last did, LastErr its error.
	Failures                  int
	FailingSince, LastFailure time.Time
	LastErr                   error
	// LastStored is when the server last answered an append: stored it,
	// or refused it as a conflict (zero: none yet).
	LastStored time.Time
	// Total counts the appends not stored since the store opened.
	Total uint64
}

// WriteHealth returns what st's appends say about its writes: a store
// that tracks them has a WriteStatus method (this package's NATS store),
// looked for through wrappers ([Unwrap]); for any other, a zero status.
func WriteHealth(st Store) WriteStatus {
	if w, ok := lookThrough[interface{ WriteStatus() WriteStatus }](st); ok {
		return w.WriteStatus()
	}
	return WriteStatus{}
}

// WriteStatus is [WriteHealth] of s.
func (s *store) WriteStatus() WriteStatus { return s.writes.status() }

// writeHealth is a store's WriteStatus, updated by every append.
type writeHealth struct {
	mu sync.Mutex
	st WriteStatus
}

func (w *writeHealth) status() WriteStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

// note records an append's outcome at now: stored (err nil or a conflict:
// the server answered), failed (an UnavailableError while the caller
// still waited), or neither (the caller gave up, bad input).
func (w *writeHealth) note(ctx context.Context, err error, now time.Time) {
	var ue *UnavailableError
	var ce *ConflictError
	switch {
	case err == nil || errors.As(err, &ce):
		w.mu.Lock()
		w.st.Failures, w.st.FailingSince, w.st.LastFailure, w.st.LastErr = 0, time.Time{}, time.Time{}, nil
		w.st.LastStored = now
		w.mu.Unlock()
	case errors.As(err, &ue) && ctx.Err() == nil:
		w.mu.Lock()
		if w.st.Failures == 0 {
			w.st.FailingSince = now
		}
		w.st.Failures++
		w.st.Total++
		w.st.LastFailure, w.st.LastErr = now, err
		w.mu.Unlock()
	}
}
