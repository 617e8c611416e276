package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/replay"
)

func init() { register(newExplainCmd) }

func newExplainCmd(g *globals) *cobra.Command {
	var (
		agent, session, from, to string
		jsonOut                  bool
	)
	cmd := &cobra.Command{
		Use:   "explain TURN_ID | --session S [--from T1] [--to T2]",
		Short: "Tell one turn, or a session's turns over a time range, in plain words",
		Long: `explain reads a turn's events from the stream (not the projections, so it
works at any point) and tells what happened and why: the requested model
and why the chain looked as it did (selection source), each attempt with
its profile, the provider's error (redacted) with the classification and
the evidence behind it, each retry, cooldown or disable it caused and until
when, every skip and probe and why, each fallback step, the notices shown,
and the end. Times are RFC 3339 UTC with offsets from the turn's start.

With --session (and optionally --from/--to, RFC 3339) it prints a timeline:
every session command and every turn of that session started in the range.
--json prints the same as structured data. When turns of several agents
share an id, name one with --agent.`,
		Example: `  fledger explain storm
  fledger explain storm --agent demo --json
  fledger explain --session dm-alice --from 2026-03-02T09:00:00Z --to 2026-03-02T09:10:00Z`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			w := newTermWriter(cmd.OutOrStdout())
			if (len(args) == 1) == (session != "") {
				return fmt.Errorf("give a TURN_ID or --session, not both or neither")
			}
			if session == "" && (from != "" || to != "") {
				return fmt.Errorf("--from and --to go with --session")
			}
			var t1, t2 time.Time
			for _, p := range []struct {
				name, val string
				dst       *time.Time
			}{{"--from", from, &t1}, {"--to", to, &t2}} {
				if p.val == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339Nano, p.val)
				if err != nil {
					return fmt.Errorf("%s %q: want an RFC 3339 time, e.g. 2026-03-02T09:00:00Z", p.name, p.val)
				}
				*p.dst = t
			}
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			if session != "" {
				tl, err := replay.ExplainTimeline(ctx, st, agent, session, t1, t2)
				if err != nil {
					return err
				}
				if jsonOut {
					return replay.WriteJSON(w, tl)
				}
				return replay.WriteTimeline(w, tl)
			}
			x, err := replay.Explain(ctx, st, agent, args[0])
			if err != nil {
				return err
			}
			if jsonOut {
				return replay.WriteJSON(w, x)
			}
			return replay.WriteExplanation(w, x)
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "the agent whose turn or session it is (default: any)")
	f.StringVar(&session, "session", "", "print a timeline of this session instead of one turn")
	f.StringVar(&from, "from", "", "timeline start, RFC 3339 (default: the beginning)")
	f.StringVar(&to, "to", "", "timeline end, RFC 3339 (default: the end)")
	f.BoolVar(&jsonOut, "json", false, "print JSON instead of text")
	return cmd
}
