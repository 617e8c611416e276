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
