package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

func init() { register(newReplayCmd) }

// replayFlags are the flags of `fledger replay`.
type replayFlags struct {
	toSeq              uint64
	until, out, whatIf string
	agent              string
	verify, jsonOut    bool
	strict             bool
	batch              int
	skipUnknown        bool
}

// newReplayCmd is `fledger replay`: a rebuild (runReplayRebuild), --verify
// (runReplayVerify) or --what-if (runReplayWhatIf).
func newReplayCmd(g *globals) *cobra.Command {
	var o replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild projections as of any point, verify every decision, or re-decide under another config",
		Long: `Without --verify or --what-if, replay rebuilds every projection into a fresh
SQLite database from sequence 1 up to --to-seq N or --until TIME (default:
the stream's end), with a progress bar on a terminal, and ends with one line:
events, commits, the sequence reached, the time taken and events/s. The
database is --out FILE, or a new file in a temporary directory (printed);
an existing FILE is replaced only when it is a fledger projection database
no other process has open (docs/projections.md, "What a rebuild deletes").
--until TIME stops before the first commit stamped after TIME.

--verify re-runs the deciders over every recorded decision — the config in
force, the session and profile state just before the commit, the provider
outcome as recorded (classification included), the recorded decision time —
and compares what they produce with what was recorded, event by event. It
exits 0 when everything matches; otherwise it prints the first divergence of
each turn (sequence, event, expected and recorded fields) and exits 1. The
classifier itself is not re-run: the raw provider error is never stored.
A stored message that is not a fledger commit is a finding, printed on a
line of its own ("seq N (subject S, B bytes): not a fledger commit: why"):
every reader skips it, so no decision was taken on it, and verify still
exits 0 (1 with --strict). Sequences missing inside the stream are named
and make verify exit 1: a stored decision is gone.

--what-if CONFIG re-decides every recorded turn under another config file
and lists, side by side, each turn whose path or outcome changes. A call the
recording has no outcome for is shown as unknown, never invented.

--json prints the result as one JSON object: for a rebuild {"database",
"events", "commits", "last_seq", "quarantined", "elapsed_ms",
"events_per_s"}; for --verify the report ({"commits", "events",
"last_seq", "turns", "checked", "diverged", "divergences", …}, same exit
status); for --what-if the list of changed turns.`,
		Example: `  fledger replay --out /tmp/at-0905.sqlite --until 2026-03-02T09:05:00Z
  fledger replay --to-seq 120
  fledger replay --verify
  fledger replay --what-if fixtures/configs/example.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReplay(cmd, g, &o) },
	}
	f := cmd.Flags()
	f.Uint64Var(&o.toSeq, "to-seq", 0, "stop after this stream sequence (inclusive; default: the stream's end)")
	f.StringVar(&o.until, "until", "", "stop before the first commit stamped after this RFC 3339 time")
	f.StringVar(&o.out, "out", "", "database file to write (a fledger projection database there is replaced; any other file, or one another process has open, is refused; default: a new temporary file)")
	f.BoolVar(&o.verify, "verify", false, "re-run the deciders over every recorded decision and compare; exit 1 on a divergence")
	f.StringVar(&o.whatIf, "what-if", "", "re-decide recorded turns under this config file and list the turns that change")
	f.StringVar(&o.agent, "agent", "", "--verify/--what-if: only this agent")
	f.BoolVar(&o.jsonOut, "json", false, "print the result as JSON: the rebuild summary, or the --verify or --what-if report")
	f.BoolVar(&o.strict, "strict", false, "--verify: also exit 1 when a stored message is quarantined (not a fledger commit)")
	f.IntVar(&o.batch, "batch", projections.DefaultBatchEvents, "events per rebuild transaction")
	f.BoolVar(&o.skipUnknown, "skip-unknown", false, "skip events of unknown types instead of failing the rebuild")
	return withMomentRule(cmd)
}

// runReplay checks the flags, opens the ledger, resolves --until to a
// sequence and runs the mode asked for: verify, what-if, or a rebuild.
func runReplay(cmd *cobra.Command, g *globals, o *replayFlags) error {
	ctx := cmd.Context()
	w := newTermWriter(cmd.OutOrStdout())
	if o.verify && o.whatIf != "" {
		return fmt.Errorf("--verify and --what-if are separate runs; pick one")
	}
	if o.strict && !o.verify {
		return fmt.Errorf("--strict is for --verify (it makes quarantined messages fail the verification)")
	}
	if cmd.Flags().Changed("out") && (o.verify || o.whatIf != "") {
		return fmt.Errorf("--out names the database a rebuild writes; --verify and --what-if write none")
	}
	if err := atLeast("--batch", o.batch, 1, "the number of events per transaction", ""); err != nil {
		return err
	}
	if err := checkToSeq(cmd, o.toSeq); err != nil {
		return err
	}
	if o.toSeq > 0 && o.until != "" {
		return fmt.Errorf("--to-seq and --until both set a stopping point; pick one")
	}
	until, err := moment{flag: "--until", seq: "--to-seq"}.parse(o.until, time.Time{})
	if err != nil {
		return err
	}
	var cfg *config.Loaded
	if o.whatIf != "" {
		if cfg, err = config.LoadFile(o.whatIf); err != nil {
			return err
		}
	}
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := ledgerAgentKnown(ctx, st, o.agent); err != nil {
		return err
	}
	if !until.IsZero() {
		m, err := replay.MomentAt(ctx, st, until)
		if err != nil {
			return err
		}
		if w := m.Warning("--until", until); w != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "fledger replay: warning: %s\n", w)
		}
		o.toSeq = m.Seq
		if o.toSeq == 0 {
			return fmt.Errorf("--until %s is before the first commit", o.until)
		}
	} else if o.toSeq > 0 {
		first, err := replay.FirstSeq(ctx, st)
		if err != nil {
			return err
		}
		if first == 0 || o.toSeq < first {
			return fmt.Errorf("--to-seq %d is before the first commit (%s)", o.toSeq, firstSeqText(first))
		}
	}
	switch {
	case o.verify:
		return runReplayVerify(cmd, w, st, o)
	case cfg != nil:
		return runReplayWhatIf(cmd, w, st, cfg, o)
	}
	return runReplayRebuild(cmd, w, st, o)
}

// runReplayWhatIf re-decides the recorded turns under cfg and lists the
// turns that change.
func runReplayWhatIf(cmd *cobra.Command, w io.Writer, st events.Store, cfg *config.Loaded, o *replayFlags) error {
	rep, err := replay.WhatIf(cmd.Context(), st, &cfg.Policy, replay.WhatIfOptions{Agent: o.agent, ToSeq: o.toSeq})
	if err != nil {
		return err
	}
	if o.jsonOut {
		return replay.WriteJSON(w, rep)
	}
	return replay.WriteWhatIf(w, rep)
}

// firstSeqText names the stream's first sequence for a message.
func firstSeqText(first uint64) string {
	if first == 0 {
		return "the stream is empty"
	}
	return fmt.Sprintf("the stream starts at sequence %d", first)
}
