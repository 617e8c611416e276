package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/interrupt"
)

// sessionsCleanupFlags are the flags of `fledger sessions cleanup`.
type sessionsCleanupFlags struct {
	agent, after    string
	enforce, dryRun bool
	asJSON          bool
	limit, workers  int
}

// newSessionsCleanupCmd is `fledger sessions cleanup`: OpenClaw's
// `openclaw sessions cleanup [--dry-run] [--enforce]`.
func newSessionsCleanupCmd(g *globals) *cobra.Command {
	var f sessionsCleanupFlags
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Prune sessions idle for longer than an age (session maintenance)",
		Long: `Session maintenance, as OpenClaw's session.maintenance pruneStaleEntries and
` + "`openclaw sessions cleanup`" + `: a session whose last activity (its last event, or
the last event of one of its turns) is older than --prune-after, and that
has no turn running, is pruned — a SessionPruned event under the session's
subject. Everything the session held (model selection, auth pin,
fallback-notice state, compactions, auth skip marks) is gone, as for a new
session key, and engines no longer keep it in memory; its next command or
turn starts it again. Its history stays on the stream (explain, export).

Without --enforce this is a dry run: it lists the sessions that would be
pruned and records nothing (OpenClaw's default mode "warn" prunes nothing
either). Each prune is decided again when it is appended: a session active
meanwhile is kept, and one whose turn begins while its prune is appended
keeps everything (the prune is void). Session keys an earlier build stored
under older id rules are never pruned. ` + "`fledger serve --session-prune-after`" + ` runs the same on a timer.

--prune-after takes days (30, 30d) or a duration (720h), at least 1m; OpenClaw's default
is 30d. --limit prunes at most N sessions, the longest idle first. With
--enforce it appends, so through --nats it needs the writer's credentials.
Ctrl-C keeps what was pruned (exit status 130); run it again to finish.`,
		Example: `  fledger sessions cleanup                      # dry run, 30 days
  fledger sessions cleanup --prune-after 7d --enforce
  fledger sessions cleanup --agent support --enforce --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSessionsCleanup(cmd, g, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.agent, "agent", "main", "agent id whose sessions are maintained")
	fl.StringVar(&f.after, "prune-after", ageString(engine.DefaultPruneAfter), "prune sessions idle for longer than this (days, or a duration like 720h)")
	fl.BoolVar(&f.enforce, "enforce", false, "prune (without it: a dry run)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "list what would be pruned and record nothing (the default)")
	fl.IntVar(&f.limit, "limit", 0, "prune at most this many sessions, the longest idle first (0 = all)")
	fl.IntVar(&f.workers, "workers", engine.DefaultPruneWorkers, "prunes appended at once")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	return cmd
}

func runSessionsCleanup(cmd *cobra.Command, g *globals, f *sessionsCleanupFlags) error {
	if f.enforce && f.dryRun {
		return errors.New("--enforce and --dry-run: choose one (without --enforce it is a dry run)")
	}
	if strings.TrimSpace(f.agent) == "" {
		return errors.New("--agent is empty: name the agent whose sessions are maintained (default main)")
	}
	after, err := parsePruneAge("--prune-after", f.after)
	if err != nil {
		return err
	}
	if f.limit < 0 {
		return fmt.Errorf("--limit %d: give 0 (all) or a positive count", f.limit)
	}
	if f.workers < 1 {
		return fmt.Errorf("--workers %d: at least 1", f.workers)
	}
	g.Writes = f.enforce
	ctx := cmd.Context()
	return withAgentEngine(ctx, g, f.agent, true, func(eng *engine.Engine) error {
		if f.enforce {
			if err := eng.CheckWritable(ctx); err != nil {
				return err
			}
		}
		rep, err := eng.PruneSessions(ctx, engine.PruneOptions{After: after, DryRun: !f.enforce, Limit: f.limit, Workers: f.workers})
		if err != nil {
			err = cleanupInterrupted(ctx, err)
			if rep == nil || len(rep.Pruned)+rep.Unsettled == 0 {
				return err
			}
			// A run that did something reports it with its error: in
			// text before the error, with --json as one object holding
			// the report and the error (the summary also on stderr).
			if !f.asJSON {
				writeCleanup(cmd, rep, after)
				return err
			}
			code, msg := 1, err.Error()
			var ee *exitError
			if errors.As(err, &ee) {
				code, msg = ee.code, ee.msg
			}
			if perr := printJSON(cmd, cleanupJSON{PruneReport: rep, Error: msg}); perr != nil {
				return perr
			}
			return &exitError{code: code, msg: msg, inResult: true}
		}
		if f.asJSON {
			return printJSON(cmd, rep)
		}
		writeCleanup(cmd, rep, after)
		return nil
	})
}

// cleanupJSON is `sessions cleanup --json` of a run that failed after it
// pruned some sessions: the report and the error in one object.
type cleanupJSON struct {
	*engine.PruneReport
	Error string `json:"error"`
}

// cleanupInterrupted is a cleanup's error once SIGINT or SIGTERM stopped
// it: the signal's exit status, and what that leaves.
func cleanupInterrupted(ctx context.Context, err error) error {
	code, ok := interrupt.ExitCode(ctx)
	if ctx.Err() == nil || !ok {
		return err
	}
	return &exitError{code: code, msg: "interrupted: sessions cleanup stopped; the sessions pruned stay pruned, run it again to prune the rest (" + err.Error() + ")"}
}

// writeCleanup prints a cleanup report for people.
func writeCleanup(cmd *cobra.Command, rep *engine.PruneReport, after time.Duration) {
	out := cmd.OutOrStdout()
	verb := "pruned"
	if rep.DryRun {
		verb = "would prune"
	}
	fmt.Fprintf(out, "agent %s: sessions idle since before %s (--prune-after %s, now %s)\n", cellText(rep.Agent),
		rep.Cutoff.Format(time.RFC3339), ageString(after), rep.Now.Format(time.RFC3339))
	if len(rep.Pruned) > 0 {
		tw := newTable(out)
		fmt.Fprintln(tw, "SESSION\tLAST ACTIVE\tIDLE\tSEQ")
		for _, p := range rep.Pruned {
			seq := "-"
			if p.Seq != 0 {
				seq = fmt.Sprint(p.Seq)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cellText(p.Session), p.LastActiveAt.Format(time.RFC3339),
				idleText(rep.Now.Sub(p.LastActiveAt)), seq)
		}
		_ = tw.Flush()
	}
	fmt.Fprintf(out, "%s %d of %d sessions", verb, len(rep.Pruned), rep.Sessions)
	for _, c := range []struct {
		n    int
		text string
	}{
		{rep.Running, "idle kept for a running turn"},
		{rep.OldKeys, "idle kept for a key an earlier build stored under older id rules"},
		{rep.Kept, "active again by the time of their prune, kept"},
		{rep.Elsewhere, "pruned first by another writer"},
		{rep.Unsettled, "cut short in flight (possibly stored)"},
		{rep.Remaining, "more left by --limit"},
	} {
		if c.n > 0 {
			fmt.Fprintf(out, "; %d %s", c.n, c.text)
		}
	}
	fmt.Fprintln(out)
	if rep.DryRun && len(rep.Pruned) > 0 {
		fmt.Fprintln(out, "dry run: nothing recorded; run again with --enforce to prune them")
	}
}
