package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/serve"
)

func init() { register(newViewCmd) }

// viewFlags are the flags of `fledger view`.
type viewFlags struct {
	httpAddr, token string
	agents          []string
	jsonOut         bool
}

// newViewCmd is `fledger view` (runView).
func newViewCmd(g *globals) *cobra.Command {
	var o viewFlags
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Serve a ledger read-only over HTTP for the incident viewer (an offline copy too)",
		Long: `view serves the ledger of --data DIR (an offline copy of a data directory
works) or of --nats URL over the same HTTP API as fledger serve, read-only: the
reads (GET /v1/timeline, /v1/turns/{id}/explanation, /v1/decisions,
/v1/profiles, /v1/turns/{id}, /v1/sessions/…) and POST /v1/what-if, which
re-decides recorded turns under another config and writes nothing. Every
other POST is answered 403 read_only: view records nothing on the stream and
applies no config. The projections are kept caught up as fledger stats does
(<--data>/projections.sqlite). No NATS micro service is registered.

It listens on loopback by default (a non-loopback --http requires --token or
FLEDGER_TOKEN) and prints the URL it listens on as its first line of output
("--http 127.0.0.1:0" picks a free port); with --json that line is
{"url": …, "agents": […], "read_only": true}. Without --agent it serves every
agent of the ledger, the agent of the stream's last commit being the default one.
SIGINT/SIGTERM stops it.`,
		Example: `  fledger view --data ./fledger-data
  fledger view --data /mnt/copy-of-ledger --http 127.0.0.1:0
  fledger view --nats nats://127.0.0.1:4222 --token s3cret --agent main`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runView(cmd, g, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.httpAddr, "http", "127.0.0.1:7401", "HTTP listen address (non-loopback requires --token)")
	f.StringVar(&o.token, "token", "", "bearer token required on every route but /healthz (or FLEDGER_TOKEN)")
	f.BoolVar(&o.jsonOut, "json", false, `print the first line as JSON: {"url", "agents", "read_only"}`)
	f.StringSliceVar(&o.agents, "agent", nil, "agent id(s) served (default: every agent of the ledger, the last active first); the first is the default")
	return cmd
}

// runView opens the ledger for reading, the projections, and serves the
// read-only service until SIGINT/SIGTERM.
func runView(cmd *cobra.Command, g *globals, o *viewFlags) (err error) {
	if err := bindToken(o.httpAddr, &o.token); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	g.Log = log
	// The root context ends at SIGINT/SIGTERM (internal/interrupt: also
	// one caught while the binary initialised); a second signal has its
	// default effect, which ends a drain that takes too long.
	ctx := cmd.Context()
	defer func() { err = startInterrupted(ctx, "view", err) }()
	st, err := openLedger(ctx, g)
	if err != nil {
		return err
	}
	defer st.Close()
	db, err := openServeProjections(ctx, g, st, log)
	if err != nil {
		return err
	}
	defer db.Close()
	// The agents come from the projection, caught up first (from its
	// checkpoint: a long ledger is read once, not at every start): an
	// --agent it holds no event of is refused, as `turns --agent` refuses
	// it (a stream subject holding only a quarantined message is no
	// agent).
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return err
	}
	if _, err := projections.NewProjector(db, projections.WithProjectorLogger(log)).CatchUp(ctx, st, last); err != nil {
		return err
	}
	active, err := db.ActiveAgents(ctx)
	if err != nil {
		return err
	}
	agents := o.agents
	for _, a := range agents {
		if !slices.Contains(active, a) {
			return unknownAgent(a, active)
		}
	}
	if len(agents) == 0 {
		agents = active
	}
	svc, err := serve.New(ctx, serve.Config{Store: st, Agents: agents, Projections: db, Token: o.token, ReadOnly: true, Log: log})
	if err != nil {
		return err
	}
	defer closeService(svc)
	return serveUntilDone(ctx, g, st, svc, &serveFlags{httpAddr: o.httpAddr, token: o.token, noMicro: true,
		announce: func(url string) {
			if o.jsonOut {
				_ = json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
					URL      string   `json:"url"`
					Agents   []string `json:"agents"`
					ReadOnly bool     `json:"read_only"`
				}{url, svc.Agents(), true})
				return
			}
			fmt.Fprintf(cmd.OutOrStdout(), "fledger view: %s (read-only; agents [%s]; the page at %s/ui/)\n", url, cellTexts(svc.Agents()), url)
		}}, log)
}
