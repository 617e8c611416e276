package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// The HTTP half of the concurrency sweep: `fledger serve` as
// cmd/fledger/serve.go assembles it (engine, background projector into
// SQLite, the exporters' metrics fold following the stream, /metrics), on
// a fresh sync-always embedded server per level, HTTP on 127.0.0.1 with a
// random port. N clients (serve/client, one keep-alive transport) each
// drive turns on their own session with the step protocol: begin, then
// report each call's outcome (10% a 429) until done, exhausted or stop.

// httpContentionRetries bounds the re-sends of a step answered 503
// contention (the API says retry; the bench re-sends at once).
const httpContentionRetries = 3

// httpServer is one in-process `fledger serve` on loopback.
type httpServer struct {
	st          events.Store
	db          *projections.DB
	svc         *serve.Service
	hs          *http.Server
	url         string
	hc          *http.Client
	clock       *fastClock
	stopMetrics context.CancelFunc
	metricsDone chan struct{}
	served      chan error
}

func startHTTPServer(ctx context.Context, dir string, l *config.Loaded, agents []string) (_ *httpServer, err error) {
	s := &httpServer{clock: &fastClock{}}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.st, err = events.Open(ctx, events.WithDataDir(dir), events.WithSyncAlways(true, 0)); err != nil {
		return nil, err
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if s.db, err = projections.Open(ctx, filepath.Join(dir, "projections.sqlite")); err != nil {
		return nil, err
	}
	ledger, err := s.st.Ledger(ctx)
	if err != nil {
		return nil, err
	}
	if err = s.db.Bind(ctx, ledger); err != nil {
		return nil, err
	}
	pm := metrics.New(metrics.WithStore(s.st), metrics.WithProjection("sqlite", s.db.Checkpoint), metrics.WithProcessMetrics())
	mctx, stop := context.WithCancel(context.Background())
	s.stopMetrics, s.metricsDone = stop, make(chan struct{})
	go func() {
		defer close(s.metricsDone)
		_ = pm.Follow(mctx, s.st)
	}()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.svc, err = serve.New(ctx, serve.Config{Store: s.st, Agents: agents, Config: l, ConfigSource: "bench-concurrency",
		Projections: s.db, Log: log, Metrics: pm.Registry(),
		EngineOptions: []engine.Option{engine.WithClock(s.clock), engine.WithSeeds(func(string) uint64 { return 7 }),
			engine.WithAppendObserver(pm.ObserveAppend)}})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.hs = &http.Server{Handler: s.svc.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	s.served = make(chan error, 1)
	go func() { s.served <- s.hs.Serve(ln) }()
	s.url = "http://" + ln.Addr().String()
	// One keep-alive connection per client at every level: no dial per
	// request, no proxy, loopback only.
	s.hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil,
		DialContext:  (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second, DisableCompression: true}}
	return s, nil
}

func (s *httpServer) close() {
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
	if s.hs != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.hs.Shutdown(sctx)
		cancel()
		<-s.served
	}
	if s.svc != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.svc.Close(sctx)
		cancel()
	}
	if s.stopMetrics != nil {
		s.stopMetrics()
		<-s.metricsDone
	}
	if s.db != nil {
		_ = s.db.Close()
	}
	if s.st != nil {
		_ = s.st.Close()
	}
}

// engineCounters reads fledger_engine_commits_total and
// fledger_engine_conflicts_total (every served agent) from /metrics.
func (s *httpServer) engineCounters(ctx context.Context) (commits, conflicts uint64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		series, val, ok := strings.Cut(sc.Text(), " ")
		name, _, _ := strings.Cut(series, "{") // one series per served agent
		if !ok || (name != "fledger_engine_commits_total" && name != "fledger_engine_conflicts_total") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("GET /metrics: %s: %w", name, err)
		}
		if name == "fledger_engine_commits_total" {
			found |= 1
			commits += uint64(v)
		} else {
			found |= 2
			conflicts += uint64(v)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found != 3 {
		return 0, 0, errors.New("GET /metrics: fledger_engine_commits_total or fledger_engine_conflicts_total missing")
	}
	return commits, conflicts, nil
}

func httpAgent(n int) string { return "conc-http-" + strconv.Itoa(n) }

// runHTTPLevels runs the levels in order, each on a fresh sync-always
// server (under dir) with its own `serve` serving one agent: the turn
// routes name no agent, and a serve with several agents syncs each of them
// (one last-sequence request per served agent) until it finds the turn, so
// one agent per serve keeps every level's per-request work the same.
func runHTTPLevels(ctx context.Context, dir string, l *config.Loaded, levels []int, d time.Duration, progress func(string, ...any)) ([]SweepLevel, error) {
	var out []SweepLevel
	for _, n := range levels {
		progress("concurrency: HTTP (fledger serve), %d clients", n)
		lv, err := httpLevel(ctx, filepath.Join(dir, strconv.Itoa(n)), l, n, d)
		if err != nil {
			return nil, fmt.Errorf("HTTP, %d clients: %w", n, err)
		}
		out = append(out, lv)
	}
	return out, nil
}

func httpLevel(ctx context.Context, dir string, l *config.Loaded, n int, d time.Duration) (SweepLevel, error) {
	s, err := startHTTPServer(ctx, dir, l, []string{httpAgent(n)})
	if err != nil {
		return SweepLevel{}, fmt.Errorf("serve: %w", err)
	}
	defer s.close()
	return s.level(ctx, n, d)
}

// level runs n HTTP clients for d on agent httpAgent(n).
func (s *httpServer) level(ctx context.Context, n int, d time.Duration) (SweepLevel, error) {
	agent := httpAgent(n)
	cl := &client.Client{BaseURL: s.url, HTTP: s.hc, RetryFor: -1} // the bench counts and re-sends 503s itself
	callers := make([]*sweepCaller, n)
	session := func(w int) string { return fmt.Sprintf("agent:%s:bench:direct:%d", agent, w) }
	warm := func(ctx context.Context, w int) error {
		callers[w] = newSweepCaller(1000+n, w)
		var ws workerStats
		if _, err := s.turn(ctx, cl, agent, session(w), callers[w], &ws); err != nil {
			return err
		}
		return nil
	}
	var baseCommits, baseConflicts uint64
	var baseErr error
	started := func() { baseCommits, baseConflicts, baseErr = s.engineCounters(ctx) }
	turn := func(ctx context.Context, w int, ws *workerStats) (bool, bool) {
		finished, err := s.turn(ctx, cl, agent, session(w), callers[w], ws)
		if err != nil {
			ws.fail(err)
			return false, true
		}
		return finished, false
	}
	ws, elapsed, err := runWorkers(ctx, n, d, warm, started, turn)
	if err != nil {
		return SweepLevel{}, err
	}
	if baseErr != nil {
		return SweepLevel{}, baseErr
	}
	commits, conflicts, err := s.engineCounters(ctx)
	if err != nil {
		return SweepLevel{}, err
	}
	return levelOf("http", n, ws, elapsed, commits-baseCommits, conflicts-baseConflicts), nil
}

// turn drives one turn with the step protocol. finished is false when the
// turn was given up on contention (ws.contention counts every 503
// contention answer); err is any other failure.
func (s *httpServer) turn(ctx context.Context, cl *client.Client, agent, session string, c *sweepCaller, ws *workerStats) (finished bool, err error) {
	// send re-sends a step answered 503 contention (idempotent: nothing
	// was appended), at most httpContentionRetries times.
	send := func(f func() (*client.Step, error)) (*client.Step, bool, error) {
		for try := 0; ; try++ {
			st, err := f()
			var ae *client.Error
			if errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable && ae.Code == "contention" {
				ws.contention++
				if try < httpContentionRetries {
					continue
				}
				return nil, false, nil
			}
			return st, err == nil, err
		}
	}
	st, ok, err := send(func() (*client.Step, error) {
		return cl.Begin(ctx, client.BeginRequest{Agent: agent, Session: session})
	})
	if !ok {
		return false, err
	}
	for range sweepMaxSteps {
		nx := st.Next
		switch nx.Action {
		case "call":
			ws.calls++
			o := client.Outcome{Attempt: nx.Attempt}
			if c.fail() {
				o.Error = &client.ProviderError{Status: 429, Type: "rate_limit_error", Message: rateLimitMessage}
			} else {
				o.OK = true
			}
			id := st.TurnID
			st, ok, err = send(func() (*client.Step, error) { return cl.Report(ctx, id, o) })
		case "wait":
			_ = s.clock.Sleep(ctx, time.Duration(nx.Ms)*time.Millisecond)
			id := st.TurnID
			st, ok, err = send(func() (*client.Step, error) { return cl.Resume(ctx, id) })
		case "done":
			ws.answered++
			return true, nil
		case "exhausted", "stop":
			return true, nil
		default:
			return false, fmt.Errorf("turn %s: unknown next action %q", st.TurnID, nx.Action)
		}
		if !ok {
			return false, err
		}
	}
	return false, fmt.Errorf("turn %s: no end after %d steps", st.TurnID, sweepMaxSteps)
}
