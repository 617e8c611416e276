package engine

import (
	"context"
	"time"
)

// Clock is the engine's only source of time: every decision's now, every
// event's at and every wait go through it, so a scenario can run on
// virtual time and replay stays exact.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Sleep waits d (a retry back-off, a whole-chain overload wait) or
	// until ctx is done, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock; the default.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d on a timer, or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
