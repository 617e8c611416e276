package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/internal/scenario"
)

func init() { register(newRunCmd) }

func newRunCmd(g *globals) *cobra.Command {
	var (
		check, asJSON, realtime bool
		agent                   string
	)
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a failover scenario on the ledger and show what happened",
		Long: `Run a scenario file (YAML or JSON, schemas/scenario.v1.json): apply its
config, then play its script of turns and session commands on a virtual
clock, answering each provider call from the script. Every decision is
recorded on the event stream (the embedded server under --data, or --nats).

Each run writes under a fresh agent id (scn-<name>-<random>), so state left
by earlier runs on the same --data never changes the result and --check is
reproducible; --agent NAME runs in that namespace instead (and continues
from its state).

--check compares the run with the scenario's expect blocks and exits 1 with
the differences when reality differs. --json prints the report as JSON.
--realtime sleeps call latencies and back-offs (for demos); gaps between
script steps are always skipped.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := scenario.LoadFile(args[0])
			if err != nil {
				return err
			}
			for _, w := range sc.Loaded.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s config: %s\n", args[0], w)
			}
			ctx := cmd.Context()
			g.Writes = true
			st, err := openStore(ctx, g)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, runErr := scenario.Run(ctx, st, sc, scenario.Options{Agent: agent, Realtime: realtime})
			if rep == nil {
				return runErr
			}
			var se *scenario.ScriptError
			stopped := errors.As(runErr, &se)
			if check && !stopped {
				scenario.Check(sc, rep)
			}
			out := newTermWriter(cmd.OutOrStdout())
			if asJSON {
				err = scenario.WriteJSON(out, rep)
			} else {
				err = scenario.WriteText(out, rep)
			}
			if err != nil {
				return err
			}
			if stopped {
				return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", args[0], runErr), inResult: true}
			}
			if runErr != nil {
				return runErr
			}
			if check && len(rep.Mismatches) > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("%s: %d expectations not met", args[0], len(rep.Mismatches)), inResult: true}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&check, "check", false, "compare with the scenario's expect blocks; exit 1 on a difference")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&realtime, "realtime", false, "sleep latencies and back-offs instead of only advancing the virtual clock")
	f.StringVar(&agent, "agent", "", "agent id (stream namespace) to run in (default: a fresh scn-<name>-<random>)")
	return cmd
}
