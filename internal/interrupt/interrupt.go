// Package interrupt catches SIGINT and SIGTERM from the start of the
// process, before the heavier packages of the binary initialise, and
// turns them into a context.
//
// Without it a signal that arrives while package init runs (the classify
// rules alone take ~0.1 s) meets the disposition the process started
// with: the default kills it (exit 130, nothing flushed), and a process
// started in the background of a shell script, where SIGINT is ignored,
// loses the signal for good and waits for a second one. Importing this
// package (blank or not) from main installs the handler during init,
// before the packages sorted after it; [Context] then cancels at once if
// a signal already came.
package interrupt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that end a command: Ctrl-C and a polite kill.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// early holds a signal that arrived before [Context] was called.
var early = make(chan os.Signal, 1)

func init() { signal.Notify(early, Signals...) }

// Context returns a context that is cancelled (its cause naming the
// signal) when SIGINT or SIGTERM arrives, or at once if one arrived since
// the process started. stop releases the signals: after it a signal has
// its default effect again. Call it once per process, from main.
func Context(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, Signals...)
	signal.Stop(early) // ch has them now; a signal caught before is in early
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-early:
			cancel(signalError{s})
		case s := <-ch:
			cancel(signalError{s})
		case <-ctx.Done():
		}
		// A second signal has its default effect: Ctrl-C twice ends a
		// shutdown that takes too long.
		signal.Stop(ch)
	}()
	return ctx, func() {
		cancel(context.Canceled)
		<-done
		signal.Stop(ch)
	}
}

// signalError is a context's cause: the signal that ended it.
type signalError struct{ os.Signal }

func (e signalError) Error() string { return e.Signal.String() + " signal received" }

// ExitCode is the conventional exit status of a process ended by the
// signal that cancelled ctx (128 + its number: 130 for SIGINT, 143 for
// SIGTERM); false when ctx was not cancelled by a signal.
func ExitCode(ctx context.Context) (int, bool) {
	var se signalError
	if errors.As(context.Cause(ctx), &se) {
		if n, ok := se.Signal.(syscall.Signal); ok {
			return 128 + int(n), true
		}
		return 130, true
	}
	return 0, false
}
