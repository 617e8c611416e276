package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/replay"
)

func init() { register(newExplainCmd) }

func newExplainCmd(g *globals) *cobra.Command {
	var (
		agent, session, since, until string
		jsonOut                      bool
	)
	cmd := &cobra.Command{
		Use:   "explain TURN_ID | --session S [--since T1] [--until T2]",
		Short: "Tell one turn, or a session's turns over a time range, in plain words",
		Long: `explain reads a turn's events from the stream (not the projections, so it
works at any point) and tells what happened and why: the requested model
and why the chain looked as it did (selection source), each attempt with
its profile, the provider's error (redacted) with the classification and
the evidence behind it, each retry, cooldown or disable it caused and until
when, every skip and probe and why, each fallback step, the notices shown,
and the end. Times are RFC 3339 UTC with offsets from the turn's start.

With --session (and optionally --since/--until, RFC 3339, both inclusive)
it prints a timeline: every session command and every turn of that session
started in the range, and nothing of other sessions. An agent-wide command
of an agent the session belongs to (a stored auth order, an applied
config), which changes how the session's later turns decide, is shown as
"context (agent A, seq N, agent-wide)"; other agents' are not shown.
explain selects by time only; for a range of stream sequences use
fledger events --from-seq N --to-seq M.

--json prints the same as structured data. When turns of several agents
share an id, name one with --agent. An unknown turn or session is an
error (exit status 1) that lists the stream's agents.`,
		Example: `  fledger explain storm
  fledger explain storm --agent demo --json
  fledger explain --session dm-alice --since 2026-03-02T09:00:00Z --until 2026-03-02T09:10:00Z`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 || session != "" {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeTurnIDs(g)(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			w := newTermWriter(cmd.OutOrStdout())
			if (len(args) == 1) == (session != "") {
				return fmt.Errorf("give a TURN_ID or --session, not both or neither")
			}
			if session == "" && (since != "" || until != "") {
				return fmt.Errorf("--since and --until go with --session")
			}
			t1, err := explainSince.parse(since, time.Time{})
			if err != nil {
				return err
			}
			t2, err := explainUntil.parse(until, time.Time{})
			if err != nil {
				return err
			}
			if !t1.IsZero() && !t2.IsZero() && t1.After(t2) {
				// As the HTTP API's timeline refuses it.
				return fmt.Errorf("--since %s is after --until %s", since, until)
			}
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			if session != "" {
				tl, err := replay.ExplainTimeline(ctx, st, agent, session, t1, t2)
				if err != nil {
					return explainError(ctx, st, err)
				}
				if jsonOut {
					return replay.WriteJSON(w, tl)
				}
				return replay.WriteTimeline(w, tl)
			}
			x, err := replay.Explain(ctx, st, agent, args[0])
			if err != nil {
				return explainError(ctx, st, err)
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
	f.StringVar(&since, "since", "", "timeline start, RFC 3339 (default: the beginning)")
	f.StringVar(&until, "until", "", "timeline end, RFC 3339 (default: the end)")
	f.BoolVar(&jsonOut, "json", false, "print JSON instead of text")
	deprecatedAlias(cmd, "from", "since")
	deprecatedAlias(cmd, "to", "until")
	return withMomentRule(cmd)
}

// explain's time flags: it selects no stream sequence, fledger events does.
var (
	explainSince = moment{flag: "--since", seq: "fledger events --from-seq"}
	explainUntil = moment{flag: "--until", seq: "fledger events --to-seq"}
)

// explainError words replay's lookup errors as explain's: which turn or
// session, the agents there are, and --agent for an id several agents have;
// on a stream continuing an archived one, that an older turn is in the
// archive.
func explainError(ctx context.Context, st events.Store, err error) error {
	var le *replay.LookupError
	if !errors.As(err, &le) {
		return err
	}
	agents := strings.Join(le.Agents, ", ")
	if agents == "" {
		agents = "none"
	}
	of := ""
	if le.Agent != "" {
		of = " of agent " + le.Agent
	}
	var msg string
	switch {
	case errors.Is(le, replay.ErrAmbiguousTurn):
		return fmt.Errorf("explain: several agents have a turn %s (%s); --agent AGENT picks one", le.ID, agents)
	case errors.Is(le, replay.ErrSessionNotFound):
		msg = fmt.Sprintf("explain: no events for session %s%s (agents: %s)", le.ID, of, agents)
	default:
		msg = fmt.Sprintf("explain: no turn %s%s (agents: %s)", le.ID, of, agents)
	}
	if hint := events.ArchivedHint(ctx, st); hint != "" {
		msg += "; " + hint
	}
	return errors.New(msg)
}
