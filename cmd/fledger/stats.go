package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/projections"
)

func init() { register(newStatsCmd) }

// statsRow is one `fledger stats --json` line: the usage_stats row plus
// its status in words at --now.
type statsRow struct {
	projections.UsageStat
	Status string `json:"status"`
}

func newStatsCmd(g *globals) *cobra.Command {
	var (
		pf                    projectionFlags
		agent, provider, prof string
		nowFlag               string
	)
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show auth-profile usageStats: cooldowns, disables, failure counts",
		Long: `Show each auth profile's usageStats (OpenClaw's fields: lastUsed,
errorCount, failureCounts, cooldownUntil/Reason/Model, disabledUntil/Reason)
from the usage_stats projection, with its status in words at --now (default
the wall clock): "cooling down for 4m 10s (rate_limit, model gpt-5)",
"disabled for 9m 59s (billing)" or "ready".

The projection is first caught up to the stream's last sequence
(--no-catch-up to skip). --json prints JSON Lines with times in RFC 3339.`,
		Example: `  fledger stats
  fledger stats --provider openai --json
  fledger stats --now 2026-01-06T10:45:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now, err := projNow(nowFlag)
			if err != nil {
				return err
			}
			if at, _ := pf.atTime(); nowFlag == "" && !at.IsZero() {
				now = at // --at: statuses as of that moment
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
			rows, err := db.UsageStats(cmd.Context(), projections.StatsFilter{Agent: agent, Provider: provider, Profile: prof})
			if err != nil {
				return err
			}
			out := make([]statsRow, len(rows))
			for i, r := range rows {
				out[i] = statsRow{UsageStat: r, Status: r.Status(now)}
			}
			if pf.json {
				return projJSONLines(cmd.OutOrStdout(), out)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "AGENT\tPROFILE\tSTATUS\tERRORS\tFAILURES\tLAST USED\tLAST FAILURE")
			for _, r := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", cellText(r.Agent), cellText(r.ProfileID), cellText(r.Status), r.ErrorCount,
					projCounts(r.FailureCounts), projTime(r.LastUsed), projTime(r.LastFailureAt))
			}
			return tw.Flush()
		},
	}
	pf.add(cmd)
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent")
	cmd.Flags().StringVar(&provider, "provider", "", "only profiles of this provider")
	cmd.Flags().StringVar(&prof, "profile", "", "only this profile id")
	cmd.Flags().StringVar(&nowFlag, "now", "", "evaluate statuses at this RFC 3339 time instead of the wall clock")
	return withMomentRule(cmd)
}

// projCounts renders failureCounts as "billing=1,rate_limit=2" or "-".
func projCounts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ",")
}
