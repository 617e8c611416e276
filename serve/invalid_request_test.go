package serve_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections/metrics"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

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

func errorBody(t *testing.T, b []byte) serve.ErrorBody {
	t.Helper()
	var eb serve.ErrorBody
	if err := json.Unmarshal(b, &eb); err != nil {
		t.Fatalf("not an error body: %s", b)
	}
	return eb
}

// Ids longer than the events package's key limit are refused at begin
// (and at every session command) with 400 naming the field and the
// limit; nothing is appended, not even a model selection sent with the
// begin.
func TestHTTP_OverlongIdsRefusedUpFront(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	long := strings.Repeat("k", events.MaxKeyLen+88)
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ name, method, path, body, field string }{
		{"begin session", "POST", "/v1/turns", `{"session":"` + long + `"}`, "session"},
		{"begin turn id", "POST", "/v1/turns", `{"session":"s","turn_id":"` + long + `"}`, "turn_id"},
		{"begin turn id with model", "POST", "/v1/turns", `{"session":"s","model":"openai/gpt-5","turn_id":"` + long + `"}`, "turn_id"},
		{"model", "POST", "/v1/sessions/main/" + long + "/model", `{"model":"openai/gpt-5"}`, "session"},
		{"model profile", "POST", "/v1/sessions/main/s/model", `{"model":"openai/gpt-5@openai:` + long + `"}`, "profile"},
		{"pin", "POST", "/v1/sessions/main/s/pin", `{"profile":"` + long + `"}`, "profile"},
		{"reset", "POST", "/v1/sessions/main/" + long + "/reset", ``, "session"},
	} {
		status, b := do(t, c.method, srv.url+c.path, c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidRequest || !strings.Contains(eb.Detail, c.field) || !strings.Contains(eb.Detail, "512") {
			t.Errorf("%s: %d %s, want 400 invalid_request naming %s and 512", c.name, status, b, c.field)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
}

// `/model p/m@profile` selects the model and pins the profile (user);
// an unknown profile or one of another provider is 422 naming it, and a
// model that is not provider/model is 400. Rejections append nothing.
func TestHTTP_ModelAtProfile(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	status, b := do(t, "POST", srv.url+"/v1/sessions/main/s/model", `{"model":"openai/gpt-5@openai:a"}`)
	if status != 200 {
		t.Fatalf("select: %d %s", status, b)
	}
	var res serve.SessionCommandResult
	testutil.NoError(t, json.Unmarshal(b, &res))
	if v := res.Session; v.Model != "openai/gpt-5" || v.Pin != "openai:a" || v.PinSource != "user" {
		t.Fatalf("session after /model p/m@profile: %+v", v)
	}
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s"})
	testutil.NoError(t, err)
	if n := step.Next; n.Action != "call" || n.Provider != "openai" || n.Model != "gpt-5" || n.Profile != "openai:a" {
		t.Fatalf("first call %+v", n)
	}

	before := testutil.LastSeq(t, st)
	for _, c := range []struct {
		body, code, names string
		status            int
	}{
		{`{"model":"openai/gpt-5@nope:zzz"}`, serve.CodeUnknownProfile, "nope:zzz", 422},
		{`{"model":"openai/gpt-5@anthropic:a"}`, serve.CodeInvalidRequest, "anthropic:a", 422},
		{`{"model":"gpt-5"}`, serve.CodeInvalidRequest, "gpt-5", 400},
		{`{"model":"openai/gpt-5@"}`, serve.CodeInvalidRequest, "openai/gpt-5@", 400},
		{`{"model":"openai/gpt-5@openai:a","profile":"anthropic:b"}`, serve.CodeInvalidRequest, "anthropic:b", 400},
	} {
		status, b := do(t, "POST", srv.url+"/v1/sessions/main/s2/model", c.body)
		eb := errorBody(t, b)
		if status != c.status || eb.Error != c.code || !strings.Contains(eb.Detail, c.names) {
			t.Errorf("%s: %d %s, want %d %s naming %s", c.body, status, b, c.status, c.code, c.names)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("rejected selections appended (%d → %d)", before, now)
	}
}

// The Authorization scheme is case-insensitive (RFC 7235).
func TestHTTP_BearerSchemeCaseInsensitive(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) { c.Token = "s3cret" })
	for h, want := range map[string]int{
		"Bearer s3cret": 200, "bearer s3cret": 200, "BEARER  s3cret": 200,
		"Basic s3cret": 401, "Bearers3cret": 401, "bearer ": 401, "bearer wrong": 401,
	} {
		if status, b := do(t, "GET", srv.url+"/v1/profiles", "", "Authorization", h); status != want {
			t.Errorf("Authorization %q: %d %s, want %d", h, status, b, want)
		}
	}
}

// An applied config without a primary model refuses turns as a missing
// configuration (503 no_config) saying what to set.
func TestHTTP_EmptyConfigNoModel(t *testing.T) {
	l, err := config.Parse([]byte(`{}`), "empty")
	testutil.NoError(t, err)
	srv := startServer(t, openStore(t), serve.Config{Config: l})
	status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s"}`)
	eb := errorBody(t, b)
	if status != 503 || eb.Error != serve.CodeNoConfig ||
		!strings.HasPrefix(eb.Detail, "no model configured for agent main: set agents.defaults.model.primary") {
		t.Fatalf("%d %s", status, b)
	}
}

// JSON decode errors name the request's fields, never Go types.
func TestHTTP_DecodeErrorsNameFields(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	for _, c := range []struct{ path, body, want string }{
		{"/v1/turns", `[]`, "body must be a JSON object"},
		{"/v1/turns", `"x"`, "body must be a JSON object"},
		{"/v1/turns", `{"session":7}`, "session: expected a string, got number"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"headers":[1]}}`, "error.headers: expected an object of strings, got array"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":[]}`, "error: expected an object, got array"},
		{"/v1/turns/t1/outcomes", `{"attempt":"one","ok":true}`, "attempt: expected an integer, got string"},
		{"/v1/turns/t1/outcomes", `{"attempt":1.5,"ok":true}`, "attempt: expected an integer, got number 1.5"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":{}}}`, "error.status: "},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"code":[1]}}`, "error.code: "},
	} {
		status, b := do(t, "POST", srv.url+c.path, c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidJSON || !strings.HasPrefix(eb.Detail, c.want) {
			t.Errorf("%s: %d %s, want 400 invalid_json %q", c.body, status, b, c.want)
		}
		for _, leak := range []string{"Go ", "serve.", "classify.", "struct", "json:", "Wire"} {
			if strings.Contains(eb.Detail, leak) {
				t.Errorf("%s: detail %q leaks %q", c.body, eb.Detail, leak)
			}
		}
	}
}

func TestListenURL(t *testing.T) {
	for _, c := range []struct {
		given string
		bound net.Addr
		want  string
	}{
		{"0.0.0.0:7401", &net.TCPAddr{IP: net.IPv6zero, Port: 7401}, "http://0.0.0.0:7401"},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50123}, "http://127.0.0.1:50123"},
		{"[::1]:7400", &net.TCPAddr{IP: net.IPv6loopback, Port: 7400}, "http://[::1]:7400"},
		{"localhost:7400", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7400}, "http://localhost:7400"},
	} {
		if got := serve.ListenURL(c.given, c.bound); got != c.want {
			t.Errorf("ListenURL(%q, %v) = %q, want %q", c.given, c.bound, got, c.want)
		}
	}
}

// With the engine's appends wired to projections/metrics (as `fledger
// serve` does), fledger_append_duration_seconds counts every commit.
func TestHTTP_AppendDurationMetric(t *testing.T) {
	pm := metrics.New()
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) {
		c.Metrics = pm.Registry()
		c.EngineOptions = append(c.EngineOptions, engine.WithAppendObserver(pm.ObserveAppend))
	})
	step, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	if status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`); status != 200 {
		t.Fatalf("outcome: %d %s", status, b)
	}
	_ = step
	mfs, err := pm.Registry().Gather()
	testutil.NoError(t, err)
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == "fledger_append_duration_seconds" {
			n = mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	if n < 2 { // at least TurnStarted and the success
		t.Fatalf("fledger_append_duration_seconds count %d", n)
	}
}

// A step whose events the store refuses is a 500 saying nothing was
// recorded; the turn is unchanged and the same report succeeds later.
func TestHTTP_RefusedDecisionLeavesTurnUnchanged(t *testing.T) {
	st := &testutil.RefusingStore{Store: openStore(t)}
	srv := startServer(t, st, serve.Config{Config: loadConfig(t), EngineOptions: []engine.Option{engine.WithClock(testutil.NewManualClock(testutil.T0))},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	st.Refuse.Store(true)
	status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`)
	eb := errorBody(t, b)
	if status != 500 || eb.Error != serve.CodeInternal || !strings.Contains(eb.Detail, "nothing was recorded") || strings.Contains(eb.Detail, "envelope") {
		t.Fatalf("%d %s", status, b)
	}
	if testutil.LastSeq(t, st) != before {
		t.Fatal("appended")
	}
	st.Refuse.Store(false)
	status, b = do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`)
	if status != 200 || !strings.Contains(string(b), `"action":"done"`) {
		t.Fatalf("after: %d %s", status, b)
	}
}
