package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/replay"
)

// runReplayVerify re-runs the deciders over every recorded decision and
// prints the report; a divergence (or, with --strict, a quarantined
// message) exits 1.
func runReplayVerify(cmd *cobra.Command, w io.Writer, st events.Store, o *replayFlags) error {
	ctx := cmd.Context()
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{Agent: o.agent, ToSeq: o.toSeq})
	if err != nil {
		return err
	}
	if rep.Snapshots, err = replay.VerifySnapshots(ctx, st, o.agent); err != nil {
		return err
	}
	if l, err := st.Ledger(ctx); err == nil && l.FirstSeq > 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("this stream starts at sequence %d, continuing an archived one: the sequences before it are the archive's, verified on it (docs/operations.md, \"Mount an archive\")", l.FirstSeq))
	}
	if o.jsonOut {
		if err := replay.WriteJSON(w, rep); err != nil {
			return err
		}
	} else {
		writeVerify(w, rep)
	}
	if !rep.OK() {
		return &exitError{code: 1}
	}
	if o.strict && !rep.StrictOK() {
		fmt.Fprintf(cmd.ErrOrStderr(), "fledger replay: --strict: %d quarantined message(s) make this verification fail\n", len(rep.Quarantined))
		return &exitError{code: 1}
	}
	return nil
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
		linef(w, "note: %s\n", n)
	}
	for _, f := range rep.Quarantined {
		linef(w, "quarantined: %s\n", f)
	}
	for _, f := range rep.Missing {
		linef(w, "missing: %s\n", f)
	}
	for _, c := range rep.Snapshots {
		fmt.Fprintln(w, c)
		if !c.OK && c.Skipped == "" {
			linef(w, "  to drop it: stop every serve of agent %q, run `fledger snapshots rm %s` with this command's --data or --nats flags (and the writer's credentials), and start them again (they fold from the stream's first sequence)\n", c.Agent, shellArg(c.Agent))
		}
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
		} else {
			fmt.Fprintln(w, "every recorded decision follows from its inputs")
		}
		if n := failedSnapshots(rep); n > 0 {
			// The last line says the verification failed, not only the
			// exit status and a line above.
			fmt.Fprintf(w, "but %s: the verification fails\n", plural(n, "snapshot fails its check", "snapshots fail their checks"))
		}
		return
	}
	verb := "commits diverge"
	if rep.Diverged == 1 {
		verb = "commit diverges"
	}
	linef(w, "%d %s; the first divergence of each turn:\n", rep.Diverged, verb)
	for _, d := range rep.Divergences {
		who := "turn " + d.Turn
		switch {
		case d.Turn != "":
		case d.Session != "":
			who = "session " + d.Session
		default:
			who = "stream"
		}
		at := fmt.Sprintf("event %d", d.Index)
		if d.Index < 0 {
			at = "(the whole commit)" // Index -1 in --json
		}
		linef(w, "\nseq %d %s %s (%s, agent %s, %s decision): %s\n", d.Seq, at, d.Type, who, d.Agent, d.Decision, d.Message)
		for _, f := range d.Fields {
			linef(w, "  %-32s expected %-24s recorded %s\n", f.Path, dash(f.Expected), dash(f.Recorded))
		}
		if len(d.Fields) == 0 {
			if len(d.Expected) > 0 {
				linef(w, "  expected %s\n", d.Expected)
			}
			if len(d.Recorded) > 0 {
				linef(w, "  recorded %s\n", d.Recorded)
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

// failedSnapshots counts the snapshot checks that failed (compared and
// different, or unreadable; not those skipped).
func failedSnapshots(rep *replay.VerifyReport) int {
	n := 0
	for _, c := range rep.Snapshots {
		if !c.OK && c.Skipped == "" {
			n++
		}
	}
	return n
}
