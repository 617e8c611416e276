package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

func init() { register(newAuthCmd) }

func newAuthCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Manage the agent's auth-profile settings recorded on the stream",
	}
	order := &cobra.Command{
		Use:   "order",
		Short: "Set, clear or show the stored auth-profile order (models auth order set)",
		Long: `The stored auth-profile order is the first source of the rotation order
(seed 000 "Rotation order"): when set for a provider, only its profiles are
tried, in its order, ahead of auth.order and the configured profiles. It is
recorded per agent and provider as an AuthOrderSet event under
fledger.<agent>.order.<provider>; clearing it returns to auth.order.`,
	}
	order.AddCommand(newAuthOrderSetCmd(g), newAuthOrderClearCmd(g), newAuthOrderGetCmd(g))
	cmd.AddCommand(order)
	return cmd
}

type authOrderFlags struct {
	agent, provider, by string
	asJSON              bool
}

// authOrderJSON is `auth order set/clear --json`: as the HTTP API's
// AuthOrderResult, the stored order after the command (empty when
// cleared) and the types of the events recorded (none when nothing
// changed), plus the stream sequence of their commit (0 when none).
type authOrderJSON struct {
	Agent    string   `json:"agent"`
	Provider string   `json:"provider"`
	Profiles []string `json:"profiles"`
	Events   []string `json:"events"`
	Seq      uint64   `json:"seq"`
}

// authOrdersJSON is `auth order get --json`: the stored order of each
// provider (only --provider's when given; {} when none is stored).
type authOrdersJSON struct {
	Agent  string              `json:"agent"`
	Orders map[string][]string `json:"orders"`
}

func (f *authOrderFlags) add(cmd *cobra.Command, withProvider, required bool) {
	cmd.Flags().StringVar(&f.agent, "agent", "main", "agent id the order belongs to")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	if withProvider {
		cmd.Flags().StringVar(&f.provider, "provider", "", "provider id, e.g. openai")
		if required {
			_ = cmd.MarkFlagRequired("provider")
		}
	}
}

// withEngine opens the store and an engine for agent (caught up with the
// stream, so it decides under the config in force) and runs f. A command
// that only reads (g.Writes unset: auth order get) starts the engine from
// its snapshot but saves none: it records nothing, and a reader's
// credentials may not write.
func withEngine(ctx context.Context, g *globals, agent string, f func(*engine.Engine) error) error {
	return withAgentEngine(ctx, g, agent, !g.Writes, f)
}

// withAgentEngine is withEngine that refuses an agent the ledger does
// not hold whenever mustExist is set (a writer that only acts on what
// the agent holds, like session maintenance, would otherwise do nothing
// silently for a misspelt agent).
func withAgentEngine(ctx context.Context, g *globals, agent string, mustExist bool, f func(*engine.Engine) error) error {
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	if mustExist {
		if err := ledgerAgentKnown(ctx, st, agent); err != nil {
			return err
		}
	}
	// A command's own output is the order: the engine's info lines (a
	// snapshot loaded) are not news here; its warnings are.
	opts := []engine.Option{engine.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))}
	if !g.Writes || events.IsReadOnly(st) {
		opts = append(opts, engine.WithSnapshotsReadOnly())
	}
	eng, err := engine.New(ctx, st, agent, opts...)
	if err != nil {
		return err
	}
	defer eng.Close()
	return f(eng)
}

func setAuthOrder(cmd *cobra.Command, g *globals, f *authOrderFlags, ids []string) error {
	g.Writes = true
	return withEngine(cmd.Context(), g, f.agent, func(eng *engine.Engine) error {
		if err := eng.CheckWritable(cmd.Context()); err != nil {
			return err
		}
		evs, err := eng.SetAuthOrder(cmd.Context(), f.provider, ids, f.by)
		if errors.Is(err, engine.ErrNoConfig) {
			return fmt.Errorf("%w (record one with `fledger config apply --agent %s FILE`)", err, f.agent)
		}
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		seq := uint64(0)
		if len(evs) > 0 {
			seq = evs[0].Seq
		}
		if f.asJSON {
			res := authOrderJSON{Agent: f.agent, Provider: f.provider, Profiles: append([]string{}, ids...), Events: []string{}, Seq: seq}
			for _, ev := range evs {
				res.Events = append(res.Events, ev.Type)
			}
			return printJSON(cmd, res)
		}
		if len(ids) == 0 {
			fmt.Fprintf(out, "cleared the stored auth order of %s for agent %q (stream sequence %d); auth.order applies\n", f.provider, f.agent, seq)
			return nil
		}
		fmt.Fprintf(out, "stored auth order of %s for agent %q: %s (stream sequence %d)\n", f.provider, f.agent, strings.Join(ids, " "), seq)
		return nil
	})
}

func newAuthOrderSetCmd(g *globals) *cobra.Command {
	f := &authOrderFlags{}
	cmd := &cobra.Command{
		Use:   "set --provider PROVIDER PROFILE_ID...",
		Short: "Store the auth-profile order of a provider (an AuthOrderSet event)",
		Long: `Store PROFILE_ID... as the agent's auth-profile order for --provider. Every
id must be a configured profile of the provider in the config in force, each
listed once; otherwise nothing is recorded and the error names the id.`,
		Example: `  fledger auth order set --provider openai openai:work openai:personal`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return setAuthOrder(cmd, g, f, args)
		},
	}
	f.add(cmd, true, true)
	cmd.Flags().StringVar(&f.by, "by", "cli", "who sets the order (recorded in the event: one line of 1..128 bytes)")
	return cmd
}

func newAuthOrderClearCmd(g *globals) *cobra.Command {
	f := &authOrderFlags{}
	cmd := &cobra.Command{
		Use:   "clear --provider PROVIDER",
		Short: "Clear the stored auth-profile order of a provider (back to auth.order)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return setAuthOrder(cmd, g, f, nil)
		},
	}
	f.add(cmd, true, true)
	cmd.Flags().StringVar(&f.by, "by", "cli", "who clears the order (recorded in the event)")
	return cmd
}

func newAuthOrderGetCmd(g *globals) *cobra.Command {
	f := &authOrderFlags{}
	cmd := &cobra.Command{
		Use:   "get [--provider PROVIDER]",
		Short: "Show the stored auth-profile orders of the agent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEngine(cmd.Context(), g, f.agent, func(eng *engine.Engine) error {
				orders := eng.AuthOrders()
				if f.asJSON {
					res := authOrdersJSON{Agent: f.agent, Orders: map[string][]string{}}
					for p, o := range orders {
						if len(o) > 0 && (f.provider == "" || p == f.provider) {
							res.Orders[p] = o
						}
					}
					return printJSON(cmd, res)
				}
				writeAuthOrders(cmd.OutOrStdout(), f.agent, f.provider, orders)
				return nil
			})
		},
	}
	f.add(cmd, true, false)
	return cmd
}

func writeAuthOrders(w io.Writer, agent, provider string, orders map[string][]string) {
	if provider != "" {
		if o := orders[provider]; len(o) > 0 {
			fmt.Fprintf(w, "%s: %s\n", cellText(provider), cellTexts(o))
		} else {
			fmt.Fprintf(w, "%s: no stored order for agent %q (auth.order applies)\n", cellText(provider), agent)
		}
		return
	}
	if len(orders) == 0 {
		fmt.Fprintf(w, "no stored auth order for agent %q (auth.order applies)\n", agent)
		return
	}
	ps := make([]string, 0, len(orders))
	for p := range orders {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		fmt.Fprintf(w, "%s: %s\n", cellText(p), cellTexts(orders[p]))
	}
}
