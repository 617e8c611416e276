package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/serve"
)

func init() { register(newServeCmd) }

// shutdownGrace bounds draining in-flight requests and the projector's
// last batch on SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

func newServeCmd(g *globals) *cobra.Command {
	var (
		httpAddr, cfgFile, token string
		agents                   []string
		noMicro                  bool
		maxBody                  int64
		natsListen               int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the failover ledger to gateways over HTTP and NATS",
		Long: `Start (or, with --nats, connect to) NATS with JetStream, keep the projections
caught up, and serve the failover ledger to gateways in any language: a JSON
HTTP API (docs/api.md, schemas/openapi.v1.yaml) on --http and the same
operations as the NATS micro service "fledger" (subjects fledgerapi.v1.*).

--config FILE applies that config to every served agent at start (nothing is
appended when it is already the agent's latest); without it the latest
ConfigApplied on the stream is used; with neither, turns are refused.

HTTP listens on loopback by default; a non-loopback --http requires --token
(or FLEDGER_TOKEN), sent by clients as "Authorization: Bearer <token>".
SIGINT/SIGTERM stops accepting, drains requests in flight, stops the micro
service, finishes the projector's batch and closes the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv("FLEDGER_TOKEN")
			}
			if err := checkBind(httpAddr, token); err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			var loaded *config.Loaded
			if cfgFile != "" {
				l, err := config.LoadFile(cfgFile)
				if err != nil {
					return err
				}
				for _, w := range l.Warnings {
					log.Warn("config", "file", cfgFile, "warning", w.String())
				}
				loaded = l
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()

			var extra []events.Option
			if natsListen > 0 && g.NATSURL != "" {
				return fmt.Errorf("--nats-listen opens a port on the embedded NATS server, but --nats (or NATS_URL) names an existing server %s: drop one of them", g.NATSURL)
			}
			if natsListen > 0 {
				// The listener requires a user: the read-only one may
				// call the micro service's read endpoints.
				extra = append(extra, events.WithListen(natsListen), events.WithReaderRequests(serve.MicroReadSubjects()...),
					events.WithListenPasswords(os.Getenv("FLEDGER_NATS_WRITER_PASSWORD"), os.Getenv("FLEDGER_NATS_READER_PASSWORD")))
			}
			g.Writes = true
			st, err := openStore(ctx, g, extra...)
			if err != nil {
				return err
			}
			defer st.Close()
			if events.IsReadOnly(st) {
				return fmt.Errorf("serve records turns, but it is connected as the read-only user %s: connect as the writer (--nats-user %s, or that server's --data)", events.ReaderUser, events.WriterUser)
			}
			if err := os.MkdirAll(g.DataDir, 0o755); err != nil {
				return err
			}
			// The same database the query commands use for this stream
			// (embedded or --nats), bound to the ledger before serving so
			// a database built from another stream is refused at start.
			dbPath := (&projectionFlags{}).path(g)
			db, err := projections.Open(ctx, dbPath, projections.WithLogger(log))
			if err != nil {
				return err
			}
			defer db.Close()
			ledger, err := st.Ledger(ctx)
			if err != nil {
				return err
			}
			if err := db.Bind(ctx, ledger); err != nil {
				return err
			}
			// The exporters' Prometheus fold of the stream, served at
			// /metrics with the service's own metrics.
			pm := metrics.New(metrics.WithStore(st), metrics.WithProjection("sqlite", db.Checkpoint), metrics.WithProcessMetrics())
			mctx, stopMetrics := context.WithCancel(context.Background())
			metricsDone := make(chan struct{})
			go func() {
				defer close(metricsDone)
				if err := pm.Follow(mctx, st); err != nil {
					log.Warn("metrics: follow", "err", err)
				}
			}()
			defer func() { stopMetrics(); <-metricsDone }()
			svc, err := serve.New(ctx, serve.Config{Store: st, Agents: agents, Config: loaded, ConfigSource: cfgFile,
				Projections: db, Token: token, MaxBodyBytes: maxBody, Log: log, Metrics: pm.Registry(),
				EngineOptions: []engine.Option{engine.WithAppendObserver(pm.ObserveAppend)}})
			if err != nil {
				return err
			}
			// Closed last (after the HTTP drain), bounded by the grace.
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
				defer cancel()
				svc.Close(sctx)
			}()

			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return err
			}
			hs := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
				WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
				ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
			served := make(chan error, 1)
			go func() { served <- hs.Serve(ln) }()

			var stopMicro func() error
			if !noMicro {
				ms, err := svc.StartMicro(st)
				if err != nil {
					_ = hs.Close()
					return fmt.Errorf("micro service: %w", err)
				}
				stopMicro = ms.Stop
			}
			log.Info("fledger serve", "http", serve.ListenURL(httpAddr, ln.Addr()), "agents", svc.Agents(), "micro", !noMicro,
				"nats", natsDesc(g, st.ClientURL()), "auth", token != "")

			select {
			case err := <-served:
				return err
			case <-ctx.Done():
			}
			log.Info("shutting down: draining requests")
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer cancel()
			if err := hs.Shutdown(sctx); err != nil {
				log.Warn("http shutdown", "err", err)
			}
			if stopMicro != nil {
				if err := stopMicro(); err != nil {
					log.Warn("micro stop", "err", err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "127.0.0.1:7400", "HTTP listen address (non-loopback requires --token)")
	f.StringVar(&cfgFile, "config", "", "config file to apply to every served agent at start")
	f.StringVar(&token, "token", "", "bearer token required on every route but /healthz (or FLEDGER_TOKEN)")
	f.StringSliceVar(&agents, "agent", []string{serve.DefaultAgent}, "agent id(s) served (stream namespaces); the first is the default")
	f.BoolVar(&noMicro, "no-micro", false, "do not register the NATS micro service")
	f.IntVar(&natsListen, "nats-listen", 0, "with the embedded server: also listen for NATS clients on this loopback port (micro service for other processes)")
	f.Int64Var(&maxBody, "max-body", serve.DefaultMaxBodyBytes, "request body limit in bytes")
	return cmd
}

// checkBind refuses a non-loopback HTTP address without a token.
func checkBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("--http " + addr + " is not a loopback address: set --token (or FLEDGER_TOKEN) so clients must authenticate")
}

func natsDesc(g *globals, listen string) string {
	if g.NATSURL != "" {
		return g.NATSURL
	}
	if listen != "" {
		return "embedded " + listen + " (users " + events.WriterUser + ", " + events.ReaderUser + "; credentials in " +
			filepath.Join(g.DataDir, events.WriterCredentialsFile) + ", " + filepath.Join(g.DataDir, events.ReaderCredentialsFile) + ")"
	}
	return "embedded (in-process) in " + g.DataDir
}
