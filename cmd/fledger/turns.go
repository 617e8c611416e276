package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/projections"
)

func init() { register(newTurnsCmd) }

func newTurnsCmd(g *globals) *cobra.Command {
	var (
		pf                      projectionFlags
		agent, session, outcome string
		since                   string
		limit                   int
	)
	cmd := &cobra.Command{
		Use:   "turns",
		Short: "List turns: requested model, answered by, attempts, outcome, duration",
		Long: `List the turns projection by start time: the requested model and
selection source, the model and profile that answered, the number of
provider calls, the outcome (succeeded, exhausted, stopped, or unfinished
for a turn with no terminal event yet) with its reason, and the duration.

Filters: --session, --outcome, --since (RFC 3339 or a duration before now),
--limit (the N most recent). The projection is first caught up to the
stream's last sequence (--no-catch-up to skip). --json prints JSON Lines.`,
		Example: `  fledger turns --limit 20
  fledger turns --outcome exhausted --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outcome != "" && !slices.Contains(outcomeValues, outcome) {
				return fmt.Errorf("--outcome %q: want succeeded, exhausted, stopped or unfinished", outcome)
			}
			if err := atLeast("--limit", limit, 0, "the number of turns", "all"); err != nil {
				return err
			}
			t, err := turnsSinceMoment.parse(since, time.Now())
			if err != nil {
				return err
			}
			pf.agent = agent
			db, err := openProjections(cmd, g, &pf)
			if err != nil {
				return err
			}
			defer pf.close(db)
			if err := projAgentKnown(cmd.Context(), db, &pf, agent); err != nil {
				return err
			}
			rows, err := db.Turns(cmd.Context(), projections.TurnFilter{Agent: agent, Session: session, Outcome: outcome, Since: t, Limit: limit})
			if err != nil {
				return err
			}
			if pf.json {
				return projJSONLines(cmd.OutOrStdout(), rows)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "STARTED\tAGENT\tTURN\tSESSION\tREQUESTED\tANSWERED BY\tATTEMPTS\tOUTCOME\tREASON\tDURATION")
			for _, r := range rows {
				dur := "-"
				if r.Outcome != projections.OutcomeUnfinished {
					dur = (time.Duration(r.DurationMs) * time.Millisecond).String()
				}
				answered := r.AnsweredBy
				if answered != "" && r.AnsweredProfileID != "" {
					answered += " @" + r.AnsweredProfileID
				}
				outcome := r.Outcome
				if r.Outcome == projections.OutcomeStopped && r.Disposition != "" {
					// Why it stopped (abort, refusal, compaction, …): the
					// reason of an abort is only "unknown".
					outcome += " (" + cellText(r.Disposition) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", projTime(r.StartedAt), cellText(r.Agent), cellText(r.TurnID), projDash(r.SessionID),
					projDash(r.RequestedModel), projDash(answered), r.Attempts, outcome, projDash(r.Reason), dur)
			}
			return tw.Flush()
		},
	}
	pf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only this agent")
	f.StringVar(&session, "session", "", "only turns of this session")
	f.StringVar(&outcome, "outcome", "", "only turns with this outcome: succeeded | exhausted | stopped | unfinished")
	f.StringVar(&since, "since", "", "only turns started at or after this RFC 3339 time, or this long ago (e.g. 2h)")
	f.IntVar(&limit, "limit", 0, "only the N most recent turns (0 = all)")
	_ = cmd.RegisterFlagCompletionFunc("outcome", completeValues(outcomeValues...))
	return withMomentRule(cmd)
}
