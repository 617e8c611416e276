package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

func loadConfig(t testing.TB) *config.Loaded {
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	return l
}

type server struct {
	svc *serve.Service
	cl  *client.Client
	url string
}

// startServer serves st over httptest with cfg's defaults filled in; every
// answer is validated against schemas/openapi.v1.yaml (checked).
func startServer(t testing.TB, st events.Store, cfg serve.Config) *server {
	t.Helper()
	cfg.Store = st
	if cfg.Projections == nil {
		db, err := projections.Open(testutil.Context(t), t.TempDir()+"/p.sqlite")
		testutil.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		cfg.Projections = db
	}
	svc, err := serve.New(testutil.Context(t), cfg)
	testutil.NoError(t, err)
	t.Cleanup(func() { svc.Close(context.Background()) })
	hs := httptest.NewServer(checked(t, svc.Handler()))
	t.Cleanup(hs.Close)
	return &server{svc: svc, cl: client.New(hs.URL, cfg.Token), url: hs.URL}
}

func defaultServer(t testing.TB, clock engine.Clock, extra ...func(*serve.Config)) (*server, events.Store) {
	// A listener, so a foreign client (natstest.DialWriter) may publish beside it.
	st := testutil.Store(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	cfg := serve.Config{Config: loadConfig(t), EngineOptions: []engine.Option{engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 })}}
	for _, f := range extra {
		f(&cfg)
	}
	return startServer(t, st, cfg), st
}

// twoServers starts two serve instances on one stream: an embedded server
// listening on loopback and a second connection to it with the listener's
// writer credentials, as two gateway hosts would share one NATS server.
// It returns the first instance's store and both servers.
func twoServers(t testing.TB, opts ...engine.Option) (events.Store, *server, *server) {
	t.Helper()
	st1, st2 := testutil.OpenPair(t)
	a := startServer(t, st1, serve.Config{Config: loadConfig(t), EngineOptions: opts})
	b := startServer(t, st2, serve.Config{Config: loadConfig(t), EngineOptions: opts})
	return st1, a, b
}

// do sends one request and returns the status and the body.
func do(t *testing.T, method, url, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testutil.Context(t), method, url, strings.NewReader(body))
	testutil.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// microAnswer sends body to the micro endpoint ep and returns the
// answer's Nats-Service-Error-Code ("" = none) and its data read as an
// ErrorBody.
func microAnswer(t *testing.T, nc *nats.Conn, ep, body string) (string, serve.ErrorBody) {
	t.Helper()
	m, err := nc.Request(serve.MicroPrefix+"."+ep, []byte(body), 5*time.Second)
	testutil.NoError(t, err)
	var eb serve.ErrorBody
	_ = json.Unmarshal(m.Data, &eb)
	return m.Header.Get("Nats-Service-Error-Code"), eb
}

func errorBody(t *testing.T, b []byte) serve.ErrorBody {
	t.Helper()
	var eb serve.ErrorBody
	if err := json.Unmarshal(b, &eb); err != nil {
		t.Fatalf("not an error body: %s", b)
	}
	return eb
}

// jsonDecode decodes resp's body into v.
func jsonDecode(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}
