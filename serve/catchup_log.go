package serve

import (
	"log/slog"
	"time"
)

// catchUpRepeatEvery spaces the lines about background catch-ups that go
// on failing the same way: the loop retries every interval (0.5 s by
// default), and an outage or a replaced stream would otherwise write a
// line each time.
const catchUpRepeatEvery = 30 * time.Second

// catchUpLog writes the background catch-up's failures: the first one
// and every change of error at once, the same error again at most once
// per catchUpRepeatEvery with how long and how many times it failed, and
// one line when a catch-up succeeds again. Only the projector's loop
// uses it.
type catchUpLog struct {
	log     *slog.Logger
	since   time.Time // the first failure of the current run (zero: none)
	lastLog time.Time
	lastErr string
	fails   int
}

func (c *catchUpLog) note(now time.Time, err error) {
	if err == nil {
		if !c.since.IsZero() {
			c.log.Info("projections: catch-up succeeds again", "failed_for", now.Sub(c.since).Round(time.Millisecond), "failed_catch_ups", c.fails)
		}
		*c = catchUpLog{log: c.log}
		return
	}
	c.fails++
	if c.since.IsZero() {
		c.since = now
	}
	msg := err.Error()
	switch {
	case c.fails == 1:
		c.log.Warn("projections: catch-up", "err", err)
	case msg != c.lastErr || now.Sub(c.lastLog) >= catchUpRepeatEvery:
		c.log.Warn("projections: catch-up still failing", "err", err, "failing_for", now.Sub(c.since).Round(time.Second), "failed_catch_ups", c.fails)
	default:
		return
	}
	c.lastLog, c.lastErr = now, msg
}
