package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/spf13/cobra"
)

// configApplyJSON is `config apply --json`: whether an event was appended
// (false: that config was already in force) and the stream sequence of
// the ConfigApplied in force.
type configApplyJSON struct {
	Agent    string        `json:"agent"`
	File     string        `json:"file"`
	Hash     string        `json:"hash"`
	Applied  bool          `json:"applied"`
	Seq      uint64        `json:"seq"`
	Warnings []problemJSON `json:"warnings"`
	// Notes are config check's notes on the config applied (one: it sets
	// no default primary, applied with --allow-no-primary).
	Notes []string `json:"notes"`
}

func newConfigApplyCmd(g *globals) *cobra.Command {
	var agent string
	var allowUnknown, allowNoPrimary, asJSON bool
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Record a config as the one in force (a ConfigApplied event)",
		Long: `Validate FILE and append a ConfigApplied event for the agent, so every
later turn names the config it ran under and replay re-decides with the same
rules. Applying the config already in force appends nothing (also when it
was recorded by an earlier release in an older canonical format). Unknown
keys are errors, as in config check; --allow-unknown-keys keeps them as
warnings, recorded in the event.

A config that sets no agents.defaults.model.primary is refused (exit
status 1, nothing appended): once in force, every turn that names no model
fails with 503 no_config, the agent down for every caller that relies on
the configured model (an empty file is such a config). An agent
whose own agents.entries model is set (--agent) is served by it and is
not refused. Pass --allow-no-primary when every caller names its model;
the note config check prints is then printed on stderr.

--json prints {"agent", "file", "hash", "applied", "seq", "warnings",
"notes"}; for an invalid or unreadable file, as config check does,
{"agent", "file", "valid": false, "problems"} (exit status 1); for a
refused one {"error"} (exit status 1).

The event store is the embedded NATS server under --data (created on first
use) unless --nats names an existing server.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := config.LoadFile(args[0], loadOptions(allowUnknown)...)
			if asJSON && err != nil {
				return printConfigInvalid(cmd, agent, args[0], err)
			}
			if err != nil {
				return err
			}
			notes := configNotes(l)
			// Refused only when the agent applied to has no model at all:
			// an agents.entries model of its own serves it.
			if len(notes) > 0 && !allowNoPrimary && l.Policy.Agents[agent].Primary.Model == "" {
				return fmt.Errorf("%s %s (503 no_config); nothing applied: set a primary, or pass --allow-no-primary if every turn names its model", args[0], noPrimaryNote)
			}
			if !asJSON { // --json lists them
				for _, w := range l.Warnings {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", args[0], w)
				}
				for _, n := range notes {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s %s\n", args[0], n)
				}
			}
			ctx := cmd.Context()
			g.Writes = true
			if strings.TrimSpace(agent) == "" {
				return errors.New("--agent is empty: name the agent the config applies to (default main)")
			}
			if err := newAgentProblem(g, agent); err != nil {
				return fmt.Errorf("%w: agent %v", engine.ErrBadRequest, err) // as engine.CheckAgent words it
			}
			st, err := openStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			res, applied, err := engine.ApplyConfig(ctx, st, agent, args[0], l, time.Now())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd, configApplyJSON{Agent: agent, File: args[0], Hash: l.Hash, Applied: applied, Seq: res,
					Warnings: problemsJSON(l.Warnings), Notes: notes})
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
	cmd.Flags().BoolVar(&allowUnknown, "allow-unknown-keys", false, "keep unknown keys as warnings instead of errors (a file written for a newer release)")
	cmd.Flags().BoolVar(&allowNoPrimary, "allow-no-primary", false, "apply a config that sets no agents.defaults.model.primary (every turn must then name its model)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
