package serve_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// Strings that are not UTF-8 — raw bytes or a \u escape of a lone
// surrogate, both read by encoding/json as U+FFFD, so two different ids
// would collide — are refused with 400 naming the field, over HTTP and
// over the micro service, and nothing is recorded.
func TestHTTP_InvalidUTF8Refused(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	before := testutil.LastSeq(t, st)
	cases := []struct {
		name, method, path, endpoint, body, field string
	}{
		{"raw byte in session", "POST", "/v1/turns", "turns.begin", "{\"session\":\"inv\xffalid\"}", "session:"},
		{"lone high surrogate", "POST", "/v1/turns", "turns.begin", `{"session":"inv\ud800alid"}`, "session:"},
		{"lone low surrogate", "POST", "/v1/turns", "turns.begin", `{"session":"s","turn_id":"t\udc00"}`, "turn_id:"},
		{"truncated sequence in model", "POST", "/v1/sessions/main/s/model", "sessions.model", "{\"model\":\"openai/gpt-5\xe2\x82\"}", "model:"},
		{"outcome turn id", "POST", "/v1/turns/x%FF/outcomes", "turns.outcome", "{\"turn_id\":\"x\xff\",\"attempt\":1,\"ok\":true}", "turn_id:"},
		{"key", "POST", "/v1/sessions/main/s/model", "sessions.model", "{\"model\":\"openai/gpt-5\",\"\xff\":1}", "a key:"},
		{"array element", "POST", "/v1/agents/main/auth/order/anthropic", "", "{\"profiles\":[\"anthropic:a\",\"anthropic:\xff\"]}", "profiles[1]:"},
	}
	for _, c := range cases {
		status, b := do(t, c.method, srv.url+c.path, c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidJSON || !strings.Contains(eb.Detail, c.field) || !strings.Contains(eb.Detail, "UTF-8") {
			t.Errorf("HTTP %s: %d %s, want 400 invalid_json naming %s and UTF-8", c.name, status, b, c.field)
		}
		if c.endpoint == "" {
			continue
		}
		m, err := nc.Request(serve.MicroPrefix+"."+c.endpoint, []byte(c.body), 5*time.Second)
		testutil.NoError(t, err)
		var meb serve.ErrorBody
		_ = json.Unmarshal(m.Data, &meb)
		if m.Header.Get("Nats-Service-Error-Code") != "400" || meb.Error != serve.CodeInvalidJSON || !strings.Contains(meb.Detail, c.field) {
			t.Errorf("micro %s: %v %s, want 400 invalid_json naming %s", c.name, m.Header, m.Data, c.field)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
	// The provider's own text inside an outcome's error is read
	// leniently (a body truncated mid character is common): not refused.
	begun, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "lenient"})
	testutil.NoError(t, err)
	body := "{\"attempt\":1,\"error\":{\"status\":429,\"message\":\"rate limited \xe2\x82\",\"body\":{\"\xff\":\"\\ud800\"},\"headers\":{\"x-id\":\"a\xc0\"}}}"
	if status, b := do(t, "POST", srv.url+"/v1/turns/"+begun.TurnID+"/outcomes", body); status != 200 {
		t.Fatalf("provider text that is not UTF-8: %d %s, want 200", status, b)
	}
	// Valid non-ASCII, a paired surrogate escape and an escaped U+FFFD
	// are fine.
	for _, body := range []string{`{"session":"café ✓"}`, `{"session":"emoji \ud83d\ude00"}`, `{"session":"rep \ufffd"}`, "{\"session\":\"rep \xef\xbf\xbd\"}"} {
		if status, b := do(t, "POST", srv.url+"/v1/turns", body); status != 200 {
			t.Errorf("%s: %d %s, want 200", body, status, b)
		}
	}
}

// rawPost writes a whole request with a body of n bytes on a plain TCP
// connection before reading anything — as a client that does not watch
// for an early answer does — and returns the status line and the body of
// the answer. A server that stops reading and closes makes the write (or
// the read) fail with a connection reset.
func rawPost(t *testing.T, base, path string, n int, chunked bool) (string, []byte) {
	t.Helper()
	u, err := url.Parse(base)
	testutil.NoError(t, err)
	c, err := net.Dial("tcp", u.Host)
	testutil.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	body := append(append([]byte(`{"session":"`), bytes.Repeat([]byte("a"), n-14)...), '"', '}')
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", path, u.Host)
	if chunked {
		fmt.Fprintf(&req, "Transfer-Encoding: chunked\r\n\r\n")
		for len(body) > 0 {
			k := min(len(body), 64<<10)
			fmt.Fprintf(&req, "%x\r\n%s\r\n", k, body[:k])
			body = body[k:]
		}
		req.WriteString("0\r\n\r\n")
	} else {
		fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", len(body))
		req.Write(body)
	}
	if _, err := c.Write(req.Bytes()); err != nil {
		t.Fatalf("writing a %d-byte body: %v (the server did not read it to the end)", n, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to a %d-byte body: %v", n, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, b
}

// Every oversized body is answered with a readable JSON 413, whether the
// client announces its length or sends it chunked, on every route.
func TestHTTP_OversizedBodyReadable413(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	for _, c := range []struct {
		name    string
		path    string
		n       int
		chunked bool
	}{
		{"8 MiB with Content-Length", "/v1/turns", 8 << 20, false},
		{"8 MiB chunked", "/v1/turns", 8 << 20, true},
		{"10 MB", "/v1/turns", 10_000_000, false},
		{"just over the limit", "/v1/turns", serve.DefaultMaxBodyBytes + 1, false},
		{"on a route without a body", "/v1/profiles", 4 << 20, false},
		{"on a path-valued route", "/v1/sessions/main/s/reset", 3 << 20, true},
	} {
		status, b := rawPost(t, srv.url, c.path, c.n, c.chunked)
		var eb serve.ErrorBody
		if err := json.Unmarshal(b, &eb); err != nil || !strings.HasPrefix(status, "413") || eb.Error != serve.CodeBodyTooLarge {
			t.Errorf("%s: %s %s, want 413 body_too_large", c.name, status, b)
		}
	}
	// A client that waits for "100 Continue" before sending an oversized
	// body gets the 413 at once and never sends it.
	u, _ := url.Parse(srv.url)
	c, err := net.Dial("tcp", u.Host)
	testutil.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "POST /v1/turns HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", u.Host, 8<<20)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	testutil.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), serve.CodeBodyTooLarge) {
		t.Errorf("Expect: 100-continue: %d %s, want 413 body_too_large before the body", resp.StatusCode, b)
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
}

// Paths ServeMux would redirect (a bare 307 to the cleaned path) are
// answered 404 in the API's error format, like every unknown path; a
// wrong method is 405.
func TestHTTP_EveryPathAnswersJSON(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"POST", "//v1/turns", 404, serve.CodeNotFound},
		{"POST", "/v1//turns", 404, serve.CodeNotFound},
		{"POST", "/v1/./turns", 404, serve.CodeNotFound},
		{"POST", "/v1/x/../turns", 404, serve.CodeNotFound},
		{"GET", "//healthz", 404, serve.CodeNotFound},
		{"GET", "//v1/turns", 404, serve.CodeNotFound},
		{"GET", "/v1//turns", 404, serve.CodeNotFound},
		{"DELETE", "/v1/x/../profiles", 404, serve.CodeNotFound},
		{"POST", "/v1/turns/", 404, serve.CodeNotFound},
		{"GET", "/nope", 404, serve.CodeNotFound},
		{"GET", "/v1/turns", 405, serve.CodeMethodNotAllowed},
		{"DELETE", "/v1/profiles", 405, serve.CodeMethodNotAllowed},
	} {
		req, err := http.NewRequestWithContext(testutil.Context(t), c.method, srv.url+c.path, strings.NewReader(`{"session":"s"}`))
		testutil.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := noRedirect.Do(req)
		testutil.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var eb serve.ErrorBody
		if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != c.status || eb.Error != c.code ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %d %q %s, want %d %s as JSON", c.method, c.path, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.status, c.code)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
	// A percent-encoded slash or dot inside a session key is not a path
	// segment: still routed.
	if status, b := do(t, "POST", srv.url+"/v1/sessions/main/a%2F%2Fb/reset", ""); status != 200 {
		t.Fatalf("encoded slashes in a session key: %d %s", status, b)
	}
}

// The auth order route refuses a provider that no configured profile has,
// for a set and for a clear, with 422 naming it; nothing is recorded. A
// configured provider is still set and cleared.
func TestHTTP_AuthOrderUnknownProvider(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ provider, body string }{
		{"%2A", `{}`},
		{"anthr.opic", `{}`},
		{"%3E", `{}`},
		{"groq", `{"profiles":[]}`},
		{"anthropic2", `{"profiles":["anthropic:a"]}`},
	} {
		status, b := do(t, "POST", srv.url+"/v1/agents/main/auth/order/"+c.provider, c.body)
		eb := errorBody(t, b)
		want, _ := url.PathUnescape(c.provider)
		if status != 422 || eb.Error != serve.CodeInvalidRequest || !strings.Contains(eb.Detail, fmt.Sprintf("%q", want)) || !strings.Contains(eb.Detail, "anthropic, openai") {
			t.Errorf("provider %s %s: %d %s, want 422 invalid_request naming it and the configured providers", c.provider, c.body, status, b)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused orders appended (%d → %d)", before, now)
	}
	for _, body := range []string{`{"profiles":["anthropic:b","anthropic:a"]}`, `{}`} {
		if status, b := do(t, "POST", srv.url+"/v1/agents/main/auth/order/anthropic", body); status != 200 {
			t.Fatalf("anthropic %s: %d %s", body, status, b)
		}
	}
}
