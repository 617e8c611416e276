package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/projections"
)

func init() { register(newSessionsCmd) }

func newSessionsCmd(g *globals) *cobra.Command {
	var (
		pf             projectionFlags
		agent, session string
	)
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "Show each session's model selection, auth pin and fallback-notice state",
		Long: `Show the session_selection projection: the stored model override and its
source (user, default, auto, legacy, cron), an auto override's origin, the
auth-profile pin and its source (auto, user), the fallback-notice state
(selected and active model, reason; empty when no fallback is active) and
the last /new or /reset. Fallback itself is turn-local and never changes the
selection.

The projection is first caught up to the stream's last sequence
(--no-catch-up to skip). --json prints JSON Lines.`,
		Example: `  fledger sessions
  fledger sessions --session s-alpha --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pf.agent = agent
			db, err := openProjections(cmd, g, &pf)
			if err != nil {
				return err
			}
			defer pf.close(db)
			if err := projAgentKnown(cmd.Context(), db, &pf, agent); err != nil {
				return err
			}
			rows, err := db.Sessions(cmd.Context(), projections.SessionFilter{Agent: agent, Session: session})
			if err != nil {
				return err
			}
			if pf.json {
				return projJSONLines(cmd.OutOrStdout(), rows)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "AGENT\tSESSION\tSELECTED\tSOURCE\tAUTO ORIGIN\tPIN\tPIN SOURCE\tFALLBACK NOTICE\tLAST RESET")
			for _, s := range rows {
				notice := "-"
				if s.FallbackNoticeActiveModel != "" {
					notice = fmt.Sprintf("%s → %s (%s)", s.FallbackNoticeSelectedModel, s.FallbackNoticeActiveModel, s.FallbackNoticeReason)
				}
				reset := "-"
				if s.LastReset != "" {
					reset = s.LastReset + " " + projTime(s.LastResetAt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cellText(s.Agent), cellText(s.SessionKey),
					projDash(projRef(s.ProviderOverride, s.ModelOverride)), projDash(s.ModelOverrideSource),
					projDash(projRef(s.AutoOriginProvider, s.AutoOriginModel)), projDash(s.AuthProfileOverride),
					projDash(s.AuthProfileOverrideSource), notice, reset)
			}
			return tw.Flush()
		},
	}
	pf.add(cmd)
	cmd.Flags().StringVar(&agent, "agent", "", "only this agent")
	cmd.Flags().StringVar(&session, "session", "", "only this session key")
	cmd.AddCommand(newSessionsCleanupCmd(g))
	return withMomentRule(cmd)
}

func projRef(provider, model string) string {
	if provider == "" && model == "" {
		return ""
	}
	return provider + "/" + model
}
