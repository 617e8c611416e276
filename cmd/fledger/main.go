// Command fledger is the event-sourced failover ledger: it records every
// auth-profile rotation, cooldown and model fallback step as an event on a
// NATS JetStream stream and rebuilds usageStats, session selection and
// model_fallback_decision logs from those events.
//
// Run `fledger --help` for the command list.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "fledger:", ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "fledger:", err)
		os.Exit(1)
	}
}

// exitError ends the process with a specific status after cobra returns.
// An empty msg prints nothing (the command already reported what went wrong).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d: %s", e.code, e.msg) }
