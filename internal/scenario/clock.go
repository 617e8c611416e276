package scenario

import (
	"context"
	"sync"
	"time"
)

// Clock is the scenario's virtual clock (an engine.Clock): latencies and
// waits advance it instantly; with Realtime they also sleep, for demos.
type Clock struct {
	mu       sync.Mutex
	now      time.Time
	realtime bool
}

// NewClock starts a virtual clock at start.
func NewClock(start time.Time, realtime bool) *Clock {
	return &Clock{now: start.UTC(), realtime: realtime}
}

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d (sleeping d too with Realtime).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if c.realtime {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// AdvanceTo moves the clock to t when t is later (never backwards), without
// sleeping: the gaps between script steps are skipped even with Realtime.
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
}
