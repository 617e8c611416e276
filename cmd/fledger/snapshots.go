package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
)

func init() { register(newSnapshotsCmd) }

func newSnapshotsCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "snapshots",
		Short: "List or remove the engines' stored snapshots",
		Long: `An engine starts from its agent's stored snapshot (the folded state at a
stream sequence) and folds only what follows; ` + "`fledger replay --verify`" + `
compares each snapshot with the fold from the stream's first sequence
(docs/engine.md, "Snapshots"). "snapshots" (or "snapshots list") lists
them: agent, stream sequence, bytes. "snapshots rm AGENT" removes one that
verify found wrong, so that the next engine of the agent folds from the
stream's first sequence and saves a good one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listSnapshots(cmd, g, asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON Lines output")
	cmd.AddCommand(newSnapshotsListCmd(g), newSnapshotsRmCmd(g))
	return cmd
}

// snapshotJSON is one line of `snapshots list --json`. Problem is set,
// and Seq 0, when the stored object's metadata does not read (not saved
// by fledger).
type snapshotJSON struct {
	Agent   string `json:"agent"`
	Seq     uint64 `json:"seq"`
	Bytes   uint64 `json:"bytes"`
	Problem string `json:"problem,omitempty"`
}

func newSnapshotsListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the stored engine snapshots: agent, stream sequence, size",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return listSnapshots(cmd, g, asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON Lines output")
	return cmd
}

// listSnapshots prints the stored snapshots from their object info (no
// snapshot is read).
func listSnapshots(cmd *cobra.Command, g *globals, asJSON bool) error {
	ctx := cmd.Context()
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	ss, ok1 := st.(events.Snapshots)
	stat, ok2 := st.(events.SnapshotStat)
	if !ok1 || !ok2 {
		return errors.New("this store keeps no snapshots")
	}
	agents, err := ss.SnapshotAgents(ctx)
	if err != nil {
		return err
	}
	var rows []snapshotJSON
	for _, a := range agents {
		seq, size, err := stat.StatSnapshot(ctx, a)
		switch {
		case errors.Is(err, events.ErrNoSnapshot):
			continue // removed since the listing
		case errors.Is(err, events.ErrBadSnapshot):
			rows = append(rows, snapshotJSON{Agent: a, Bytes: size, Problem: err.Error()})
		case err != nil:
			return err
		default:
			rows = append(rows, snapshotJSON{Agent: a, Seq: seq, Bytes: size})
		}
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
		seq := fmt.Sprint(r.Seq)
		if r.Problem != "" {
			seq = "unreadable"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\n", cellText(r.Agent), seq, r.Bytes)
	}
	return tw.Flush()
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
reported as differing from the fold from the stream's first sequence.

Stop every serve of the agent first, remove, then start them again: they
fold from the stream's first sequence and save a new snapshot. A serve
still running when its starting snapshot is removed decides on the state it
loaded until it is restarted; it no longer saves that state (it logs that
the snapshot it started from was removed), but a serve started after the
removal saves a good snapshot that one still running could later replace.

It needs the writer's credentials: with the embedded server, run it with
the server's --data while serve is stopped (the data directory is in use
while it runs).`,
		Example: `  fledger snapshots rm main
  fledger --nats nats://n1:4222 --nats-creds writer.creds snapshots rm main`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, agents []string) error {
			for _, a := range agents {
				if a == "" {
					return errors.New("an empty agent id names no agent's snapshot")
				}
			}
			g.Writes = true
			ctx := cmd.Context()
			st, err := openLedger(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			sd, ok := st.(events.SnapshotDeleter)
			if !ok {
				return errors.New("this store keeps no snapshots")
			}
			var (
				missing []string
				removed int
				seen    []string
			)
			out := cmd.OutOrStdout()
			for _, a := range agents {
				if slices.Contains(seen, a) {
					continue // named twice: removed once
				}
				seen = append(seen, a)
				seq, err := sd.DeleteSnapshot(ctx, a)
				if errors.Is(err, events.ErrNoSnapshot) {
					missing = append(missing, fmt.Sprintf("%q", a))
					continue
				}
				var pe *events.PermissionError
				if errors.As(err, &pe) {
					return fmt.Errorf("removing a snapshot needs the writer's credentials (the embedded server's --data, or --nats-creds/--nats-user of a user that may write the object store %s): %w", events.SnapshotBucket, err)
				}
				if err != nil {
					return err
				}
				removed++
				if err := printRemoved(out, asJSON, a, seq); err != nil {
					return err
				}
			}
			if g.NATSURL != "" && removed > 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "fledger snapshots rm: note: a serve of these agents still running decides on the state it started from until it is restarted (it no longer saves it): restart each now; they fold from the stream's first sequence")
			}
			if len(missing) > 0 {
				return fmt.Errorf("no snapshot stored for agent %s (`fledger snapshots list` shows the stored ones)", strings.Join(missing, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON Lines output: one line per snapshot removed, as it is removed")
	return cmd
}

// printRemoved says one snapshot was removed, as a line of text or of
// JSON.
func printRemoved(w io.Writer, asJSON bool, agent string, seq uint64) error {
	if asJSON {
		return projJSONLines(w, []removedJSON{{agent, seq}})
	}
	_, err := fmt.Fprintf(w, "removed the snapshot of agent %q (seq %d)\n", agent, seq)
	return err
}
