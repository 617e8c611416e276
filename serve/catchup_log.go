package serve

import (
	"errors"
	"log/slog"
	"time"
)

// catchUpRepeatEvery spaces the lines about background catch-ups that go
// on failing the same way: the loop retries every interval (0.5 s by
// default), and an outage or a replaced stream would otherwise write a
// line each time.
const catchUpRepeatEvery = 30 * time.Second

// catchUpLog writes the background catch-up's failures: the first one,
// and every kind of error (errorKind) not logged before in the run, at
// once; any other at most once per catchUpRepeatEvery with how long and
// how many times it failed; and one line when a catch-up succeeds again.
// Only the projector's loop uses it.
type catchUpLog struct {
	log     *slog.Logger
	since   time.Time // the first failure of the current run (zero: none)
	lastLog time.Time
	// seen are the kinds of error (errorKind) this run of failures has
	// logged: a new one is logged at once, one seen before (an outage
	// alternating between two errors) at the spacing.
	seen  map[string]bool
	fails int
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
	msg := errorKind(err)
	switch {
	case c.fails == 1:
		c.log.Warn("projections: catch-up", "err", err)
	case !c.seen[msg] || now.Sub(c.lastLog) >= catchUpRepeatEvery:
		c.log.Warn("projections: catch-up still failing", "err", err, "failing_for", now.Sub(c.since).Round(time.Second), "failed_catch_ups", c.fails)
	default:
		return
	}
	c.lastLog = now
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if len(c.seen) < 16 {
		c.seen[msg] = true
	}
}

// errorKind is the text of err's innermost wrapped error: the cause
// without the context around it, which may carry a count or a duration
// that changes from try to try.
func errorKind(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
