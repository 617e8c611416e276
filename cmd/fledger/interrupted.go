package main

import "context"

// untilInterrupted is the result of a reader that runs until interrupted
// (export, events --follow): once ctx is done (SIGINT or SIGTERM) its end
// is the normal one, exit status 0, whatever the interrupted step
// returned — opening the store, creating the consumer or waiting for the
// next commit. Records written before stay written (each batch is flushed
// before it is acknowledged).
func untilInterrupted(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}
