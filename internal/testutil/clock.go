package testutil

import (
	"context"
	"sync"
	"time"
)

// T0 is the tests' usual start time.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// ManualClock is a virtual clock for the engine and serve (it has their
// Clock's methods): time moves only when Sleep or Advance move it. Safe
// for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock starts a clock at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock forward by d instead of sleeping.
func (c *ManualClock) Sleep(ctx context.Context, d time.Duration) error {
	c.Advance(d)
	return ctx.Err()
}

// Advance moves the clock forward by d (a negative d is ignored: time
// never goes back).
func (c *ManualClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
