package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

func init() { register(newDecisionsCmd) }

// seqRange keeps the decisions (in stream order) from stream sequence
// from through to (inclusive; 0 = unbounded), the last limit of them
// when limit > 0.
func seqRange(rows []projections.DecisionRecord, from, to uint64, limit int) []projections.DecisionRecord {
	if from == 0 && to == 0 {
		return rows
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Seq >= from })
	j := len(rows)
	if to > 0 {
		j = sort.Search(len(rows), func(i int) bool { return rows[i].Seq > to })
	}
	rows = rows[i:max(i, j)]
	if limit > 0 && len(rows) > limit {
		rows = rows[len(rows)-limit:]
	}
	return rows
}

func newDecisionsCmd(g *globals) *cobra.Command {
	var (
		pf                           projectionFlags
		agent, session, turn, reason string
		since                        string
		limit                        int
		fromSeq, toSeq               uint64
	)
	cmd := &cobra.Command{
		Use:   "decisions",
		Short: "List model_fallback_decision records (candidate_failed, skip_candidate, probes, successes)",
		Long: `List the fallback_decisions projection in stream order: one row per
model_fallback_decision, with OpenClaw's field names in --json (decision,
requested/candidate/next provider and model, route origins, attempt/total,
reason, status, code, errorPreview, errorHash, previousAttempts and the
fallbackStep* fields), plus the stream sequence, time, turn and session.

Filters: --agent, --session, --turn, --reason, --since (RFC 3339 or a
duration before now, e.g. 1h), --from-seq/--to-seq (stream sequences,
inclusive, as from_seq in GET /v1/decisions), --limit (the last N). The
projection is first caught up to the stream's last sequence (--no-catch-up
to skip).`,
		Example: `  fledger decisions --since 1h
  fledger decisions --turn turn-000042
  fledger decisions --from-seq 120 --to-seq 180
  fledger decisions --reason rate_limit --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := sinceMoment.parse(since, time.Now())
			if err != nil {
				return err
			}
			if err := atLeast("--limit", limit, 0, "the number of decisions", "all"); err != nil {
				return err
			}
			if err := checkToSeq(cmd, toSeq); err != nil {
				return err
			}
			if reason != "" {
				if _, err := events.ParseReason(reason); err != nil {
					return fmt.Errorf("--reason %q is not a failure reason (one of %s): %w", reason, strings.Join(reasonValues(), ", "), err)
				}
			}
			pf.agent = agent
			pf.wantLedger = fromSeq > 0 || toSeq > 0 // for archivedRangeNote
			db, err := openProjections(cmd, g, &pf)
			if err != nil {
				return err
			}
			defer pf.close(db)
			if err := projAgentKnown(cmd.Context(), db, &pf, agent); err != nil {
				return err
			}
			f := projections.DecisionFilter{Agent: agent, Session: session, Turn: turn, Reason: reason, Since: t, Limit: limit}
			if fromSeq > 0 || toSeq > 0 {
				f.Limit = 0 // the last --limit of the range, below
			}
			rows, err := db.Decisions(cmd.Context(), f)
			if err != nil {
				return err
			}
			rows = seqRange(rows, fromSeq, toSeq, limit)
			archivedRangeNote(cmd.ErrOrStderr(), "decisions", pf.ledger, fromSeq, toSeq)
			if pf.json {
				return projJSONLines(cmd.OutOrStdout(), rows)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "SEQ\tAT\tAGENT\tTURN\tSESSION\tDECISION\tCANDIDATE\tATTEMPT\tREASON\tSTATUS\tNEXT\tSTEP OUTCOME")
			for _, d := range rows {
				status := "-"
				if d.Status != 0 {
					status = fmt.Sprint(d.Status)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", d.Seq, projTime(d.Time), cellText(d.Agent), cellText(d.TurnID),
					projDash(d.SessionID), cellText(d.Decision), projRef(d.CandidateProvider, d.CandidateModel), d.Attempt, d.Total,
					projDash(d.Reason), status, projDash(projRef(d.NextCandidateProvider, d.NextCandidateModel)),
					projDash(d.FallbackStepFinalOutcome))
			}
			return tw.Flush()
		},
	}
	pf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only this agent")
	f.StringVar(&session, "session", "", "only decisions of this session")
	f.StringVar(&turn, "turn", "", "only decisions of this turn")
	f.StringVar(&reason, "reason", "", "only decisions with this failure reason (e.g. rate_limit)")
	f.StringVar(&since, "since", "", "only decisions at or after this RFC 3339 time, or this long ago (e.g. 30m)")
	f.IntVar(&limit, "limit", 0, "only the last N decisions (0 = all)")
	f.Uint64Var(&fromSeq, "from-seq", 0, "only decisions at or after this stream sequence")
	f.Uint64Var(&toSeq, "to-seq", 0, "only decisions at or before this stream sequence (default: the stream's end)")
	_ = cmd.RegisterFlagCompletionFunc("reason", completeValues(reasonValues()...))
	return withMomentRule(cmd)
}
