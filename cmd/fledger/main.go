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

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/internal/interrupt"
)

func main() {
	// Caught since this package's imports initialised (internal/interrupt):
	// a signal during start-up ends the command as one later does.
	ctx, stop := interrupt.Context(context.Background())
	defer stop()
	code := execute(ctx, newRootCmd())
	stop()
	os.Exit(code)
}

// execute runs root and returns the exit status, having reported the
// error if any: with --json as one JSON object {"error": "…"} on the
// command's output (see jsonError), else as "fledger: …" on root's error
// output. An exitError with no message was reported by its command.
func execute(ctx context.Context, root *cobra.Command) int {
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	code, msg, inResult := 1, err.Error(), false
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg, inResult = ee.code, ee.msg, ee.inResult
	}
	switch {
	case msg == "":
	case !inResult && cmd != nil && wantsJSON(cmd):
		_ = writeJSONError(cmd.OutOrStdout(), msg)
	default:
		fmt.Fprintln(root.ErrOrStderr(), "fledger:", msg)
	}
	return code
}

// exitError ends the process with a specific status after cobra returns.
// An empty msg prints nothing (the command already reported what went
// wrong). inResult says the result the command printed records the
// failure (run's stop and mismatches): msg is then a summary for people,
// on stderr also with --json.
type exitError struct {
	code     int
	msg      string
	inResult bool
}

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d: %s", e.code, e.msg) }
