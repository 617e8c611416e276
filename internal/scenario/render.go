package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fledger/fledger/internal/redact"
)

// WriteText renders the report for people: per turn who answered after how
// many attempts, each attempt, retry, cooldown, skip and fallback step with
// its reason, each notice exactly as the user sees it, the exhaustion
// summary; then the profiles' usageStats and, when checked, the
// expectation diff — or, when the run stopped at a step, that it did.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	writeHeader(&b, rep)
	for _, st := range rep.Steps {
		b.WriteString("\n")
		if c := st.Command; c != nil {
			writeCommandStep(&b, st.Offset, c)
			continue
		}
		if t := st.Turn; t != nil {
			writeTurnStep(&b, rep, st.Offset, t)
		}
	}
	writeProfiles(&b, rep.Profiles)
	switch {
	case rep.Stopped != nil:
		// The check line is for a run that finished: it comes last.
		fmt.Fprintf(&b, "\nrun stopped at script[%d] (%s): the steps after it did not run, and nothing was checked\n",
			rep.Stopped.Step, rep.Stopped.Offset)
	case rep.Checked:
		writeCheck(&b, rep.Mismatches)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeader writes the report's first lines: the scenario's name, start,
// agent and config hash, then its description indented, one line each.
func writeHeader(b *strings.Builder, rep *Report) {
	fmt.Fprintf(b, "scenario %s  (start %s, agent %s, config %s)\n", rep.Scenario, rep.Start.Format(time.RFC3339), rep.Agent, short(rep.ConfigHash))
	if rep.Description != "" {
		for _, l := range strings.Split(strings.TrimSpace(rep.Description), "\n") {
			fmt.Fprintf(b, "  %s\n", strings.TrimSpace(l))
		}
	}
}

// writeCommandStep writes a command step as one line: its offset and text,
// then the session, the events it recorded and its error when it has them.
func writeCommandStep(b *strings.Builder, offset string, c *CommandReport) {
	fmt.Fprintf(b, "%-9s %s", offset, c.Text)
	if c.Session != "" {
		fmt.Fprintf(b, "  session %s", c.Session)
	}
	if len(c.Events) > 0 {
		fmt.Fprintf(b, "  → %s", strings.Join(c.Events, ", "))
	}
	if c.Error != "" {
		fmt.Fprintf(b, "  ERROR %s", c.Error)
	}
	b.WriteString("\n")
}

// writeTurnStep writes a turn: its heading, one line per event line of the
// turn, the outcome (writeOutcome), the notices the user saw and the
// warnings about configured things the turn never used.
func writeTurnStep(b *strings.Builder, rep *Report, offset string, t *TurnReport) {
	fmt.Fprintf(b, "%-9s turn %s  session %s (%s)  requested %s\n", offset, t.ID, t.Session, t.Chat, t.Requested)
	for _, l := range t.Lines {
		fmt.Fprintf(b, "  %-9s %s\n", l.Offset, l.Text)
	}
	writeOutcome(b, rep, t)
	for _, n := range t.Notices {
		if n.Delivered {
			fmt.Fprintf(b, "  user sees: %s\n", n.Text)
		}
	}
	for _, u := range t.Unused {
		fmt.Fprintf(b, "  warning: %s was never used\n", u)
	}
}

// writeOutcome writes the ⇒ line that ends a turn: who answered, or why
// it was exhausted (with the soonest cooldown expiry) or stopped.
func writeOutcome(b *strings.Builder, rep *Report, t *TurnReport) {
	switch t.Outcome {
	case "succeeded":
		fmt.Fprintf(b, "  ⇒ answered by %s%s after %d %s (%s)\n", t.AnsweredBy, at(t.Profile), t.Attempts, plural(t.Attempts, "attempt"), ms(t.DurationMs))
	case "exhausted":
		fmt.Fprintf(b, "  ⇒ exhausted after %d %s (%s): %s\n", t.Attempts, plural(t.Attempts, "attempt"), ms(t.DurationMs), redact.String(t.Summary))
		if t.SoonestCooldown != nil {
			fmt.Fprintf(b, "    soonest cooldown expiry %s\n", rep.offset(t.SoonestCooldown.UnixMilli()))
		}
	case "stopped":
		fmt.Fprintf(b, "  ⇒ stopped after %d %s: %s (%s)\n", t.Attempts, plural(t.Attempts, "attempt"), t.Disposition, t.Reason)
	case "switched":
		fmt.Fprintf(b, "  ⇒ switched after %d %s: run the same turn again on %s (selected during the run, outside the chain)\n", t.Attempts, plural(t.Attempts, "attempt"), t.SwitchedTo)
	default:
		fmt.Fprintf(b, "  ⇒ %s after %d %s\n", t.Outcome, t.Attempts, plural(t.Attempts, "attempt"))
	}
}

// writeProfiles writes the profiles' usageStats at the end of the run, one
// line per profile, naming only the fields that are set.
func writeProfiles(b *strings.Builder, profiles []ProfileReport) {
	b.WriteString("\nprofiles at the end:\n")
	for _, p := range profiles {
		fmt.Fprintf(b, "  %-28s errorCount %d", p.ID, p.ErrorCount)
		if p.CooldownUntil != "" {
			fmt.Fprintf(b, "  cooldownUntil %s (%s", p.CooldownUntil, p.CooldownReason)
			if p.CooldownModel != "" {
				fmt.Fprintf(b, ", model %s", p.CooldownModel)
			}
			b.WriteString(")")
		}
		if p.DisabledUntil != "" {
			fmt.Fprintf(b, "  disabledUntil %s (%s)", p.DisabledUntil, p.DisabledReason)
		}
		if p.BlockedUntil != "" {
			fmt.Fprintf(b, "  blockedUntil %s (%s from %s", p.BlockedUntil, p.BlockedReason, p.BlockedSource)
			if p.BlockedModel != "" {
				fmt.Fprintf(b, ", model %s", p.BlockedModel)
			}
			b.WriteString(")")
		}
		if p.LastUsed != "" {
			fmt.Fprintf(b, "  lastUsed %s", p.LastUsed)
		}
		b.WriteString("\n")
	}
}

// writeCheck writes the expectation check of a checked run: that every
// expectation was met, or each one that was not.
func writeCheck(b *strings.Builder, mismatches []Mismatch) {
	if len(mismatches) == 0 {
		b.WriteString("\ncheck: every expectation met\n")
		return
	}
	fmt.Fprintf(b, "\ncheck: %d %s not met\n", len(mismatches), plural(len(mismatches), "expectation"))
	for _, m := range mismatches {
		fmt.Fprintf(b, "  %s\n", m)
	}
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func ms(d int64) string { return (time.Duration(d) * time.Millisecond).String() }

func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}
