package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

func init() { register(newReplayCmd) }

func newReplayCmd(g *globals) *cobra.Command {
	var (
		toSeq              uint64
		until, out, whatIf string
		agent              string
		verify, jsonOut    bool
		strict             bool
		batch              int
		skipUnknown        bool
	)
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild projections as of any point, verify every decision, or re-decide under another config",
		Long: `Without --verify or --what-if, replay rebuilds every projection into a fresh
SQLite database from sequence 1 up to --to-seq N or --until TIME (default:
the stream's end), with a progress bar on a terminal, and ends with one line:
events, commits, the sequence reached, the time taken and events/s. The
database is --out FILE, or a new file in a temporary directory (printed).
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
recording has no outcome for is shown as unknown, never invented.`,
		Example: `  fledger replay --out /tmp/at-0905.sqlite --until 2026-03-02T09:05:00Z
  fledger replay --to-seq 120
  fledger replay --verify
  fledger replay --what-if fixtures/configs/example.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			w := newTermWriter(cmd.OutOrStdout())
			if verify && whatIf != "" {
				return fmt.Errorf("--verify and --what-if are separate runs; pick one")
			}
			if toSeq > 0 && until != "" {
				return fmt.Errorf("--to-seq and --until both set a stopping point; pick one")
			}
			var cfg *config.Loaded
			if whatIf != "" {
				var err error
				if cfg, err = config.LoadFile(whatIf); err != nil {
					return err
				}
			}
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			if until != "" {
				t, err := time.Parse(time.RFC3339Nano, until)
				if err != nil {
					return fmt.Errorf("--until %q: want an RFC 3339 time, e.g. 2026-03-02T09:05:00Z", until)
				}
				if toSeq, err = replay.SeqAt(ctx, st, t); err != nil {
					return err
				}
				if toSeq == 0 {
					return fmt.Errorf("--until %s is before the first commit", until)
				}
			}
			switch {
			case verify:
				rep, err := replay.Verify(ctx, st, replay.VerifyOptions{Agent: agent, ToSeq: toSeq})
				if err != nil {
					return err
				}
				if jsonOut {
					if err := replay.WriteJSON(w, rep); err != nil {
						return err
					}
				} else {
					writeVerify(w, rep)
				}
				if !rep.OK() {
					return &exitError{code: 1}
				}
				if strict && !rep.StrictOK() {
					fmt.Fprintf(cmd.ErrOrStderr(), "fledger replay: --strict: %d quarantined message(s) make this verification fail\n", len(rep.Quarantined))
					return &exitError{code: 1}
				}
				return nil
			case cfg != nil:
				rep, err := replay.WhatIf(ctx, st, &cfg.Policy, replay.WhatIfOptions{Agent: agent, ToSeq: toSeq})
				if err != nil {
					return err
				}
				if jsonOut {
					return replay.WriteJSON(w, rep)
				}
				return replay.WriteWhatIf(w, rep)
			}
			path := out
			if path == "" {
				dir, err := os.MkdirTemp("", "fledger-replay-")
				if err != nil {
					return err
				}
				path = filepath.Join(dir, projections.DefaultFile)
			}
			errOut := cmd.ErrOrStderr()
			var bar *progressbar.ProgressBar
			progress := func(done, to uint64) {
				if !projIsTerminal(errOut) {
					return
				}
				if bar == nil {
					bar = progressbar.NewOptions64(int64(to), progressbar.OptionSetWriter(errOut),
						progressbar.OptionSetDescription("replaying"), progressbar.OptionShowCount(),
						progressbar.OptionSetItsString("seq"), progressbar.OptionShowIts(),
						progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
				}
				_ = bar.Set64(int64(done))
			}
			log := slog.New(quietQuarantine{slog.NewTextHandler(errOut, &slog.HandlerOptions{Level: slog.LevelWarn})})
			res, err := replay.Rebuild(ctx, st, path, replay.RebuildOptions{ToSeq: toSeq, Projector: []projections.ProjectorOption{
				projections.WithBatchEvents(batch), projections.WithSkipUnknown(skipUnknown),
				projections.WithProgress(progress), projections.WithProjectorLogger(log)}})
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			secs := res.Elapsed.Seconds()
			rate := 0.0
			if secs > 0 {
				rate = float64(res.Events) / secs
			}
			if res.Quarantined > 0 {
				if db, err := projections.Open(ctx, res.Path); err == nil {
					q, _ := db.Quarantined(ctx)
					_ = db.Close()
					warnQuarantined(errOut, "replay", q)
				}
			}
			fmt.Fprintf(w, "database %s\n", res.Path)
			fmt.Fprintf(w, "replayed %d events (%d commits) up to seq %d in %s (%.0f events/s)\n",
				res.Events, res.Commits, res.To, res.Elapsed.Round(time.Millisecond), rate)
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&toSeq, "to-seq", 0, "stop after this stream sequence (default: the stream's end)")
	f.StringVar(&until, "until", "", "stop before the first commit stamped after this RFC 3339 time")
	f.StringVar(&out, "out", "", "database file to write (replaced if it exists; default: a new temporary file)")
	f.BoolVar(&verify, "verify", false, "re-run the deciders over every recorded decision and compare; exit 1 on a divergence")
	f.StringVar(&whatIf, "what-if", "", "re-decide recorded turns under this config file and list the turns that change")
	f.StringVar(&agent, "agent", "", "--verify/--what-if: only this agent")
	f.BoolVar(&jsonOut, "json", false, "--verify/--what-if: print the report as JSON")
	f.BoolVar(&strict, "strict", false, "--verify: also exit 1 when a stored message is quarantined (not a fledger commit)")
	f.IntVar(&batch, "batch", projections.DefaultBatchEvents, "events per rebuild transaction")
	f.BoolVar(&skipUnknown, "skip-unknown", false, "skip events of unknown types instead of failing the rebuild")
	return cmd
}

// writeVerify prints a verify report for people.
func writeVerify(w interface{ Write([]byte) (int, error) }, rep *replay.VerifyReport) {
	var kinds []string
	for _, k := range []string{replay.DecisionStart, replay.DecisionOutcome, replay.DecisionResume, replay.DecisionSession,
		replay.DecisionClear, replay.DecisionAuthOrder, replay.DecisionConfig, replay.DecisionUnexplained} {
		if n := rep.Checked[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(w, "verified %d commits (%d events, %d turns) up to seq %d: %s\n", rep.Commits, rep.Events, rep.Turns, rep.LastSeq, strings.Join(kinds, ", "))
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, f := range rep.Quarantined {
		fmt.Fprintf(w, "quarantined: %s\n", f)
	}
	for _, f := range rep.Missing {
		fmt.Fprintf(w, "missing: %s\n", f)
	}
	if len(rep.Quarantined) > 0 {
		fmt.Fprintf(w, "%s skipped as every reader skips %s: no decision was taken on %s\n",
			plural(len(rep.Quarantined), "quarantined message"), pick(len(rep.Quarantined) == 1, "it", "them"), pick(len(rep.Quarantined) == 1, "it", "them"))
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintln(w, "sequences are missing from the stream (it denies deletes: damaged storage?); the decisions they held cannot be verified")
	}
	if rep.Diverged == 0 {
		if len(rep.Missing) > 0 {
			fmt.Fprintln(w, "every recorded decision still in the stream follows from its inputs")
			return
		}
		fmt.Fprintln(w, "every recorded decision follows from its inputs")
		return
	}
	verb := "commits diverge"
	if rep.Diverged == 1 {
		verb = "commit diverges"
	}
	fmt.Fprintf(w, "%d %s; the first divergence of each turn:\n", rep.Diverged, verb)
	for _, d := range rep.Divergences {
		who := "turn " + d.Turn
		switch {
		case d.Turn != "":
		case d.Session != "":
			who = "session " + d.Session
		default:
			who = "stream"
		}
		fmt.Fprintf(w, "\nseq %d event %d %s (%s, agent %s, %s decision): %s\n", d.Seq, d.Index, d.Type, who, d.Agent, d.Decision, d.Message)
		for _, f := range d.Fields {
			fmt.Fprintf(w, "  %-32s expected %-24s recorded %s\n", f.Path, dash(f.Expected), dash(f.Recorded))
		}
		if len(d.Fields) == 0 {
			if len(d.Expected) > 0 {
				fmt.Fprintf(w, "  expected %s\n", d.Expected)
			}
			if len(d.Recorded) > 0 {
				fmt.Fprintf(w, "  recorded %s\n", d.Recorded)
			}
		}
	}
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func dash(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}
