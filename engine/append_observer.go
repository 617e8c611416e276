package engine

import (
	"fmt"
	"time"
)

// WithAppendObserver sets f to receive the latency of every commit the
// engine appends: from the start of the decision to the store's
// acknowledgement, conflict re-decides included. Decisions that append
// nothing (a no-op command, an error) are not observed. `fledger serve`
// passes projections/metrics' ObserveAppend here
// (fledger_append_duration_seconds). f must be fast and safe for
// concurrent use.
func WithAppendObserver(f func(time.Duration)) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: nil append observer", ErrBadRequest)
		}
		o.appendObserver = f
		return nil
	}
}

func (e *Engine) observeAppend(start time.Time) {
	if f := e.opt.appendObserver; f != nil {
		f(time.Since(start))
	}
}
