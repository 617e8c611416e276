package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/events"
	"github.com/spf13/cobra"
)

// applyRetries bounds reload-and-retry when another writer applies a
// config at the same moment.
const applyRetries = 5

func newConfigApplyCmd(g *globals) *cobra.Command {
	var agent string
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Record a config as the one in force (a ConfigApplied event)",
		Long: `Validate FILE and append a ConfigApplied event for the agent, so every
later turn names the config it ran under and replay re-decides with the same
rules. Applying the config already in force appends nothing.

The event store is the embedded NATS server under --data (created on first
use) unless --nats names an existing server.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := config.LoadFile(args[0])
			if err != nil {
				return err
			}
			for _, w := range l.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", args[0], w)
			}
			ctx := cmd.Context()
			st, err := openStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			res, applied, err := applyConfig(ctx, st, agent, args[0], l, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !applied {
				fmt.Fprintf(out, "config %s is already in force for agent %q (stream sequence %d)\n", l.Hash, agent, res)
				return nil
			}
			fmt.Fprintf(out, "applied config %s for agent %q as stream sequence %d\n", l.Hash, agent, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "main", "agent id the config applies to")
	return cmd
}

// applyConfig appends ConfigApplied unless the agent's latest config has
// the same hash. It guards all of the agent's config subjects with the last
// sequence it read, so two concurrent applies cannot both think theirs is
// the latest; on a conflict it reloads and decides again. It returns the
// stream sequence of the config now in force and whether it appended.
func applyConfig(ctx context.Context, st events.Store, agent, source string, l *config.Loaded, now time.Time) (uint64, bool, error) {
	filter, err := events.AggregateFilter(agent, events.AggConfig)
	if err != nil {
		return 0, false, err
	}
	subject, err := events.Subject(agent, events.AggConfig, l.Hash)
	if err != nil {
		return 0, false, err
	}
	for try := 0; ; try++ {
		evs, last, err := st.ReadSubject(ctx, filter)
		if err != nil {
			return 0, false, err
		}
		if n := len(evs); n > 0 {
			if cur, ok := evs[n-1].Data.(events.ConfigApplied); ok && cur.Hash == l.Hash {
				return last, false, nil
			}
		}
		ev := events.New(agent, l.Hash, now, events.ConfigApplied{
			Hash:     l.Hash,
			Config:   l.Canonical,
			Source:   source,
			Warnings: warningStrings(l.Warnings),
		})
		res, err := st.AppendGuarded(ctx, subject, filter, last, ev)
		if errors.Is(err, events.ErrConflict) && try < applyRetries {
			continue
		}
		if err != nil {
			return 0, false, err
		}
		return res.Seq, true, nil
	}
}

func warningStrings(ps []config.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
