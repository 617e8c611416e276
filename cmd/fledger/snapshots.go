package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
)

func init() { register(newSnapshotsCmd) }

func newSnapshotsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshots",
		Short: "List or remove the engines' stored snapshots",
		Long: `An engine starts from its agent's stored snapshot (the folded state at a
stream sequence) and folds only what follows; ` + "`fledger replay --verify`" + `
compares each snapshot with the fold from the stream's first sequence
(docs/engine.md, "Snapshots"). "snapshots" lists them; "snapshots rm AGENT"
removes one that verify found wrong, so that the next engine of the agent
folds from the stream's first sequence and saves a good one.`,
	}
	cmd.AddCommand(newSnapshotsListCmd(g), newSnapshotsRmCmd(g))
	return cmd
}

// snapshotJSON is one line of `snapshots list --json`.
type snapshotJSON struct {
	Agent string `json:"agent"`
	Seq   uint64 `json:"seq"`
	Bytes int    `json:"bytes"`
}

func newSnapshotsListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the stored engine snapshots: agent, stream sequence, size",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			ss, ok := st.(events.Snapshots)
			if !ok {
				return fmt.Errorf("this store keeps no snapshots")
			}
			agents, err := ss.SnapshotAgents(ctx)
			if err != nil {
				return err
			}
			var rows []snapshotJSON
			for _, a := range agents {
				data, seq, err := ss.LoadSnapshot(ctx, a)
				if errors.Is(err, events.ErrNoSnapshot) {
					continue // removed since the listing
				}
				if errors.Is(err, events.ErrBadSnapshot) {
					rows = append(rows, snapshotJSON{Agent: a}) // seq unknown: shown as 0
					continue
				}
				if err != nil {
					return err
				}
				rows = append(rows, snapshotJSON{Agent: a, Seq: seq, Bytes: len(data)})
			}
			if asJSON {
				return projJSONLines(cmd.OutOrStdout(), rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no snapshot stored")
				return nil
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "AGENT\tSEQ\tBYTES")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%d\t%d\n", cellText(r.Agent), r.Seq, r.Bytes)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON Lines output")
	return cmd
}

// removedJSON is one line of `snapshots rm --json`: a snapshot removed.
type removedJSON struct {
	Agent string `json:"agent"`
	Seq   uint64 `json:"seq"`
}

func newSnapshotsRmCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "rm AGENT...",
		Aliases: []string{"remove"},
		Short:   "Remove agents' stored snapshots (their next engine folds from the stream's first sequence)",
		Long: `Remove the stored snapshot of each AGENT, e.g. one ` + "`fledger replay --verify`" + `
reported as differing from the fold. Stop every serve of the agent first:
an engine that started from the snapshot holds the state it loaded and
saves it again (at shutdown too). With the embedded server (--data) that
is enforced: the data directory is in use while serve runs. Then start them
again: they fold from the stream's first sequence and save a new snapshot.
It needs the writer's credentials.`,
		Example: `  fledger snapshots rm main
  fledger --nats nats://n1:4222 --nats-creds writer.creds snapshots rm main`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, agents []string) error {
			g.Writes = true
			ctx := cmd.Context()
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			sd, ok := st.(events.SnapshotDeleter)
			if !ok {
				return fmt.Errorf("this store keeps no snapshots")
			}
			var (
				missing []string
				removed []removedJSON
			)
			for _, a := range agents {
				seq, err := sd.DeleteSnapshot(ctx, a)
				if errors.Is(err, events.ErrNoSnapshot) {
					missing = append(missing, fmt.Sprintf("%q", a))
					continue
				}
				if err != nil {
					return err
				}
				removed = append(removed, removedJSON{a, seq})
				if !asJSON {
					fmt.Fprintf(cmd.OutOrStdout(), "removed the snapshot of agent %q (seq %d)\n", a, seq)
				}
			}
			if asJSON {
				if err := projJSONLines(cmd.OutOrStdout(), removed); err != nil {
					return err
				}
			}
			if g.NATSURL != "" && len(missing) < len(agents) {
				fmt.Fprintln(cmd.ErrOrStderr(), "fledger snapshots rm: note: a serve of these agents still running holds the state it started from and saves it again: restart each now (they fold from the stream's first sequence)")
			}
			if len(missing) > 0 {
				return fmt.Errorf("no snapshot stored for agent %s (`fledger snapshots list` shows the stored ones)", strings.Join(missing, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON Lines output: one line per snapshot removed")
	return cmd
}
