package main

import (
	"context"

	"github.com/fledger/fledger/internal/interrupt"
)

// untilInterrupted is the result of a reader interrupted by SIGINT or
// SIGTERM (ctx done). Following (export --follow, events --follow) runs
// until interrupted: that is its normal end, exit status 0, whatever the
// interrupted step returned — opening the store, creating the consumer or
// waiting for the next commit. A one-shot read that was interrupted did
// not reach the end of the stream: it ends with the signal's status (130
// for SIGINT, 143 for SIGTERM) and says so, so that `fledger export >
// f && ship f` never ships a partial file as a whole one. Records written
// before stay written either way (whole lines; each batch is flushed
// before it is acknowledged).
func untilInterrupted(ctx context.Context, follow bool, what string, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if follow {
		return nil
	}
	code, ok := interrupt.ExitCode(ctx)
	if !ok {
		return err // cancelled by the caller, not by a signal
	}
	return &exitError{code: code, msg: "interrupted: " + what + " stopped before the end of the stream"}
}

// startInterrupted is the result of a server (serve, view) whose start-up
// ended with err: interrupted by SIGINT or SIGTERM before it served (ctx
// done by a signal), it ends with the signal's status (130 or 143) and
// says so, instead of exit status 1 and whichever step the signal cut
// short ("context canceled" from opening the store). A server that
// served and was then interrupted ends with status 0: that is how it
// stops.
func startInterrupted(ctx context.Context, what string, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	code, ok := interrupt.ExitCode(ctx)
	if !ok {
		return err
	}
	return &exitError{code: code, msg: "interrupted: " + what + " stopped during start-up, before it served"}
}
