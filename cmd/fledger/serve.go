package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

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

// serveFlags are the flags of `fledger serve`.
type serveFlags struct {
	httpAddr, cfgFile, token string
	// listener, when set, is the HTTP address already taken
	// (runServe binds it before it records anything).
	listener      net.Listener
	agents        []string
	noMicro       bool
	maxBody       int64
	natsListen    int
	snapshotEvery uint64
	finishedTurns int
	// ackQuarantined is --ack-quarantined-through.
	ackQuarantined uint64
	// pruneAfter and maintEvery turn on session maintenance
	// (serve.SessionMaintenance): pruneAfter "" = off.
	pruneAfter, maintEvery string
	// everyGiven: --session-maintenance-every was given.
	everyGiven bool
	// announce, when set, is told the URL listened on once serving
	// (`fledger view` prints it).
	announce func(url string)
}

// newServeCmd is `fledger serve` (runServe).
func newServeCmd(g *globals) *cobra.Command {
	var o serveFlags
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
(or FLEDGER_TOKEN), sent by clients as "Authorization: Bearer <token>". The
token's surrounding white space (a secret file's trailing newline) is
trimmed; a token still holding white space or a control character is refused.
SIGINT/SIGTERM stops accepting, drains requests in flight, stops the micro
service, finishes the projector's batch and closes the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd, g, &o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.httpAddr, "http", "127.0.0.1:7400", "HTTP listen address (non-loopback requires --token)")
	f.StringVar(&o.cfgFile, "config", "", "config file to apply to every served agent at start")
	f.StringVar(&o.token, "token", "", "bearer token required on every route but /healthz (or FLEDGER_TOKEN)")
	f.StringSliceVar(&o.agents, "agent", []string{serve.DefaultAgent}, "agent id(s) served (stream namespaces); the first is the default")
	f.BoolVar(&o.noMicro, "no-micro", false, "do not register the NATS micro service")
	f.IntVar(&o.natsListen, "nats-listen", 0, "with the embedded server: also listen for NATS clients on this loopback port (micro service for other processes)")
	f.Int64Var(&o.maxBody, "max-body", serve.DefaultMaxBodyBytes, "request body limit in bytes")
	f.Uint64Var(&o.snapshotEvery, "snapshot-every", engine.DefaultSnapshotEvery,
		"save each engine's snapshot every N stream sequences and on shutdown, and start from it (0 = off: fold from sequence 1)")
	f.IntVar(&o.finishedTurns, "finished-turns", engine.DefaultFinishedTurns,
		"finished turns each engine keeps in memory (older ones are read from the stream when asked for); the same on every instance")
	f.Uint64Var(&o.ackQuarantined, "ack-quarantined-through", 0,
		"acknowledge the quarantined messages and missing sequences at or before this stream sequence: /healthz still lists them, but only later ones make it degraded (docs/operations.md)")
	f.StringVar(&o.pruneAfter, "session-prune-after", "",
		"session maintenance: prune sessions idle for longer than this (days like 30d, or a duration; at least 1m), every --session-maintenance-every (default off)")
	f.StringVar(&o.maintEvery, "session-maintenance-every", "1h", "how often session maintenance runs (with --session-prune-after; at least 1s; days or a duration)")
	return cmd
}

// minMaintenanceEvery is the shortest --session-maintenance-every: each
// pass lists every session the engines hold.
const minMaintenanceEvery = time.Second

// maintenance is the session maintenance the flags ask for (nil = off).
func (o *serveFlags) maintenance() (*serve.SessionMaintenance, error) {
	if o.pruneAfter == "" {
		if o.everyGiven {
			return nil, errors.New("--session-maintenance-every without --session-prune-after: give the age to prune after too (maintenance is off without it)")
		}
		return nil, nil
	}
	after, err := parsePruneAge("--session-prune-after", o.pruneAfter)
	if err != nil {
		return nil, err
	}
	every, err := parseAge("--session-maintenance-every", o.maintEvery, time.Millisecond)
	if errors.Is(err, errNotAge) {
		return nil, fmt.Errorf("--session-maintenance-every %q: not an interval: give days (1d) or a duration (1h, 30m), at least %s", o.maintEvery, minMaintenanceEvery)
	}
	if err != nil || every < minMaintenanceEvery {
		return nil, fmt.Errorf("--session-maintenance-every %s: at least %s (each pass lists every session held)", o.maintEvery, minMaintenanceEvery)
	}
	return &serve.SessionMaintenance{PruneAfter: after, Every: every}, nil
}

// runServe opens the store, the projections and the metrics fold, builds
// the service and serves it until SIGINT/SIGTERM. Everything opened is
// closed in reverse order: the service, the metrics fold, the database,
// the store.
func runServe(cmd *cobra.Command, g *globals, o *serveFlags) (err error) {
	if err := bindToken(o.httpAddr, &o.token); err != nil {
		return err
	}
	if err := checkPort("--nats-listen", o.natsListen); err != nil {
		return err
	}
	if o.maxBody < 1 {
		return fmt.Errorf("--max-body %d: a request body limit is at least 1 byte (default %d)", o.maxBody, serve.DefaultMaxBodyBytes)
	}
	if err := atLeast("--finished-turns", o.finishedTurns, 1, "the finished turns each engine keeps in memory", fmt.Sprintf("default %d", engine.DefaultFinishedTurns)); err != nil {
		return err
	}
	if cmd.Flags().Changed("agent") && len(o.agents) == 0 {
		return fmt.Errorf("--agent %q: name the agent id(s) to serve (default %s)", "", serve.DefaultAgent)
	}
	o.everyGiven = cmd.Flags().Changed("session-maintenance-every")
	maint, err := o.maintenance()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	g.Log = log
	loaded, err := loadServeConfig(o.cfgFile, log)
	if err != nil {
		return err
	}
	// The root context ends at SIGINT/SIGTERM (internal/interrupt: also
	// one caught while the binary initialised); a second signal has its
	// default effect, which ends a drain that takes too long.
	ctx := cmd.Context()
	defer func() { err = startInterrupted(ctx, "serve", err) }()

	if err := newAgentProblem(g, o.agents...); err != nil {
		return fmt.Errorf("serve: --agent: agent %w", err) // as serve.New words it, naming the flag
	}
	// The address is taken before anything is recorded: a serve that
	// cannot listen must not apply its --config to the fleet first.
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return err
	}
	o.listener = ln
	defer ln.Close() // closed already once served; a no-op then
	st, err := openServeStore(ctx, g, o.natsListen)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := checkAckQuarantined(ctx, st, o.ackQuarantined); err != nil {
		return err
	}
	db, err := openServeProjections(ctx, g, st, log)
	if err != nil {
		return err
	}
	defer db.Close()
	pm, stopMetrics := followMetrics(st, db, log)
	defer stopMetrics()
	svc, err := serve.New(ctx, serve.Config{Store: st, Agents: o.agents, Config: loaded, ConfigSource: o.cfgFile,
		Projections: db, QuarantineAckThrough: o.ackQuarantined, Token: o.token, MaxBodyBytes: o.maxBody, Log: log, Metrics: pm.Registry(), SessionMaintenance: maint,
		EngineOptions: []engine.Option{engine.WithAppendObserver(pm.ObserveAppend), engine.WithLogger(log),
			engine.WithSnapshotEvery(o.snapshotEvery), engine.WithFinishedTurns(o.finishedTurns)}})
	if err != nil {
		return err
	}
	// Closed last (after the HTTP drain), bounded by the grace.
	defer closeService(svc)
	return serveUntilDone(ctx, g, st, svc, o, log)
}

// loadServeConfig loads --config FILE (nil without one), logging its
// warnings.
func loadServeConfig(cfgFile string, log *slog.Logger) (*config.Loaded, error) {
	if cfgFile == "" {
		return nil, nil
	}
	l, err := config.LoadFile(cfgFile)
	if err != nil {
		return nil, err
	}
	for _, w := range l.Warnings {
		log.Warn("config", "file", cfgFile, "warning", w.String())
	}
	for _, n := range configNotes(l) {
		log.Warn("config", "file", cfgFile, "note", n)
	}
	return l, nil
}

// openServeStore opens the store for writing, with the embedded server's
// client listener when natsListen is set, and refuses a read-only
// connection.
func openServeStore(ctx context.Context, g *globals, natsListen int) (events.Store, error) {
	var extra []events.Option
	if natsListen > 0 && g.NATSURL != "" {
		return nil, fmt.Errorf("--nats-listen opens a port on the embedded NATS server, but --nats (or NATS_URL) names an existing server %s: drop one of them", events.RedactURL(g.NATSURL))
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
		return nil, err
	}
	if events.IsReadOnly(st) {
		_ = st.Close()
		return nil, fmt.Errorf("serve records turns, but it is connected as the read-only user %s: connect as the writer (--nats-user %s, or that server's --data)", events.ReaderUser, events.WriterUser)
	}
	return st, nil
}

// openServeProjections opens the same database the query commands use for
// this stream (embedded or --nats), bound to the ledger before serving so
// a database built from another stream is refused at start.
func openServeProjections(ctx context.Context, g *globals, st events.Store, log *slog.Logger) (*projections.DB, error) {
	if err := os.MkdirAll(g.DataDir, 0o755); err != nil {
		return nil, err
	}
	pf := &projectionFlags{}
	dbPath := pf.path(g)
	// A database serve cannot use names the command that rebuilds it
	// from this stream: with --nats, its flags (the generic hint would
	// send the operator to an embedded store on --data).
	withHint := func(err error) error {
		var de *projections.DBError
		if errors.As(err, &de) && de.Rebuild == "" {
			de.Rebuild = pf.rebuildCommand(g)
		}
		return err
	}
	if _, err := os.Stat(dbPath); errors.Is(err, os.ErrNotExist) {
		log.Info("no projection database yet: building it from the start of the stream in the background (turns are served meanwhile)", "db", dbPath)
	}
	db, err := projections.Open(ctx, dbPath, projections.WithLogger(log))
	var de *projections.DBError
	if errors.As(err, &de) && errors.Is(err, projections.ErrCorrupt) && !de.Foreign {
		// A damaged projection database is derived data: the engines take
		// turns without it, so serve starts, rebuilding it from the stream
		// in the background, and keeps the damaged file beside it. A file
		// that is not fledger's, or one another process has open, is
		// refused as before.
		aside, merr := projections.MoveAside(ctx, dbPath, time.Now())
		if merr != nil {
			return nil, withHint(err)
		}
		log.Warn("projections: the database is damaged: moved aside and rebuilt from the stream in the background (turns are served meanwhile; reads of the projections follow the rebuild)",
			"db", dbPath, "damaged", aside, "problem", de.Detail)
		db, err = projections.Open(ctx, dbPath, projections.WithLogger(log))
	}
	if err != nil {
		return nil, withHint(err)
	}
	ledger, err := st.Ledger(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.Bind(ctx, ledger); err != nil {
		_ = db.Close()
		return nil, withHint(err)
	}
	return db, nil
}

// followMetrics starts the exporters' Prometheus fold of the stream,
// served at /metrics with the service's own metrics; stop ends it and
// waits for it.
func followMetrics(st events.Store, db *projections.DB, log *slog.Logger) (pm *metrics.Metrics, stop func()) {
	pm = metrics.New(metrics.WithStore(st), metrics.WithProjection("sqlite", db.Checkpoint), metrics.WithProcessMetrics())
	mctx, stopMetrics := context.WithCancel(context.Background())
	metricsDone := make(chan struct{})
	go func() {
		defer close(metricsDone)
		if err := pm.Follow(mctx, st); err != nil {
			log.Warn("metrics: follow", "err", err)
		}
	}()
	return pm, func() { stopMetrics(); <-metricsDone }
}

// serveUntilDone serves HTTP on --http and, unless --no-micro, the NATS
// micro service, until ctx ends (then drains requests in flight and stops
// the micro service) or the HTTP server fails.
func serveUntilDone(ctx context.Context, g *globals, st events.Store, svc *serve.Service, o *serveFlags, log *slog.Logger) error {
	httpAddr, noMicro, token := o.httpAddr, o.noMicro, o.token
	ln := o.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", httpAddr); err != nil {
			return err
		}
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
	url, name := serve.ListenURL(httpAddr, ln.Addr()), "fledger serve"
	if o.announce != nil {
		name = "fledger view"
	}
	log.Info(name, "http", url, "agents", svc.Agents(), "micro", !noMicro,
		"nats", natsDesc(g, st.ClientURL()), "auth", token != "")
	if o.announce != nil {
		o.announce(url)
	}

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
}

// bindToken fills an empty *token from FLEDGER_TOKEN, trims its
// surrounding white space (checkToken) and refuses a non-loopback addr
// without one (checkBind).
func bindToken(addr string, token *string) error {
	source := "--token"
	if *token == "" {
		*token, source = os.Getenv("FLEDGER_TOKEN"), "FLEDGER_TOKEN"
	}
	tok, err := checkToken(source, *token)
	if err != nil {
		return err
	}
	*token = tok
	return checkBind(addr, *token)
}

// checkToken returns the bearer token of source (--token or
// FLEDGER_TOKEN) without its surrounding white space — a secret file's
// trailing newline, which no client sends — and refuses, without printing
// it, one that is only white space or still holds white space or a
// control character: no "Authorization: Bearer" header could carry it, so
// every request would be answered 401.
func checkToken(source, token string) (string, error) {
	tok := strings.TrimSpace(token)
	if tok == "" && token != "" {
		return "", fmt.Errorf("%s is only white space: give the token, or none at all", source)
	}
	for i, r := range tok {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return "", fmt.Errorf("%s holds %U at byte %d (after trimming its surrounding white space): a bearer token has no white space or control characters — clients could never send it", source, r, i)
		}
	}
	return tok, nil
}

// closeService closes svc bounded by the shutdown grace.
func closeService(svc *serve.Service) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	svc.Close(ctx)
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
		return events.RedactURL(g.NATSURL)
	}
	if listen != "" {
		return "embedded " + listen + " (users " + events.WriterUser + ", " + events.ReaderUser + "; credentials in " +
			filepath.Join(g.DataDir, events.WriterCredentialsFile) + ", " + filepath.Join(g.DataDir, events.ReaderCredentialsFile) + ")"
	}
	return "embedded (in-process) in " + g.DataDir
}

// checkAckQuarantined refuses --ack-quarantined-through past the stream's
// last sequence: it would acknowledge stray messages no one has seen yet
// (a typo, or a flag kept across a stream rotation).
func checkAckQuarantined(ctx context.Context, st events.Store, ack uint64) error {
	if ack == 0 {
		return nil
	}
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return err
	}
	if ack > last {
		return fmt.Errorf("--ack-quarantined-through %d is past the stream's last sequence %d: name a quarantined sequence you have looked at (fledger events shows them)", ack, last)
	}
	return nil
}
