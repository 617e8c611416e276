package scenario

import (
	"encoding/json"
	"fmt"
	"github.com/fledger/fledger/internal/redact"
	"io"
	"strings"
	"time"
)

// WriteText renders the report for people: per turn who answered after how
// many attempts, each attempt, retry, cooldown, skip and fallback step with
// its reason, each notice exactly as the user sees it, the exhaustion
// summary; then the profiles' usageStats and, when checked, the
// expectation diff.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s  (start %s, agent %s, config %s)\n", rep.Scenario, rep.Start.Format(time.RFC3339), rep.Agent, short(rep.ConfigHash))
	if rep.Description != "" {
		for _, l := range strings.Split(strings.TrimSpace(rep.Description), "\n") {
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(l))
		}
	}
	for _, st := range rep.Steps {
		b.WriteString("\n")
		if c := st.Command; c != nil {
			fmt.Fprintf(&b, "%-9s %s", st.Offset, c.Text)
			if c.Session != "" {
				fmt.Fprintf(&b, "  session %s", c.Session)
			}
			if len(c.Events) > 0 {
				fmt.Fprintf(&b, "  → %s", strings.Join(c.Events, ", "))
			}
			if c.Error != "" {
				fmt.Fprintf(&b, "  ERROR %s", c.Error)
			}
			b.WriteString("\n")
			continue
		}
		t := st.Turn
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "%-9s turn %s  session %s (%s)  requested %s\n", st.Offset, t.ID, t.Session, t.Chat, t.Requested)
		for _, l := range t.Lines {
			fmt.Fprintf(&b, "  %-9s %s\n", l.Offset, l.Text)
		}
		switch t.Outcome {
		case "succeeded":
			fmt.Fprintf(&b, "  ⇒ answered by %s%s after %d %s (%s)\n", t.AnsweredBy, at(t.Profile), t.Attempts, plural(t.Attempts, "attempt"), ms(t.DurationMs))
		case "exhausted":
			fmt.Fprintf(&b, "  ⇒ exhausted after %d %s (%s): %s\n", t.Attempts, plural(t.Attempts, "attempt"), ms(t.DurationMs), redact.String(t.Summary))
			if t.SoonestCooldown != nil {
				fmt.Fprintf(&b, "    soonest cooldown expiry %s\n", rep.offset(t.SoonestCooldown.UnixMilli()))
			}
		case "stopped":
			fmt.Fprintf(&b, "  ⇒ stopped after %d %s: %s (%s)\n", t.Attempts, plural(t.Attempts, "attempt"), t.Disposition, t.Reason)
		default:
			fmt.Fprintf(&b, "  ⇒ %s after %d %s\n", t.Outcome, t.Attempts, plural(t.Attempts, "attempt"))
		}
		for _, n := range t.Notices {
			if n.Delivered {
				fmt.Fprintf(&b, "  user sees: %s\n", n.Text)
			}
		}
		for _, u := range t.Unused {
			fmt.Fprintf(&b, "  warning: %s was never used\n", u)
		}
	}
	b.WriteString("\nprofiles at the end:\n")
	for _, p := range rep.Profiles {
		fmt.Fprintf(&b, "  %-28s errorCount %d", p.ID, p.ErrorCount)
		if p.CooldownUntil != "" {
			fmt.Fprintf(&b, "  cooldownUntil %s (%s", p.CooldownUntil, p.CooldownReason)
			if p.CooldownModel != "" {
				fmt.Fprintf(&b, ", model %s", p.CooldownModel)
			}
			b.WriteString(")")
		}
		if p.DisabledUntil != "" {
			fmt.Fprintf(&b, "  disabledUntil %s (%s)", p.DisabledUntil, p.DisabledReason)
		}
		if p.BlockedUntil != "" {
			fmt.Fprintf(&b, "  blockedUntil %s (%s from %s", p.BlockedUntil, p.BlockedReason, p.BlockedSource)
			if p.BlockedModel != "" {
				fmt.Fprintf(&b, ", model %s", p.BlockedModel)
			}
			b.WriteString(")")
		}
		if p.LastUsed != "" {
			fmt.Fprintf(&b, "  lastUsed %s", p.LastUsed)
		}
		b.WriteString("\n")
	}
	if rep.Checked {
		if len(rep.Mismatches) == 0 {
			b.WriteString("\ncheck: every expectation met\n")
		} else {
			fmt.Fprintf(&b, "\ncheck: %d %s not met\n", len(rep.Mismatches), plural(len(rep.Mismatches), "expectation"))
			for _, m := range rep.Mismatches {
				fmt.Fprintf(&b, "  %s\n", m)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
