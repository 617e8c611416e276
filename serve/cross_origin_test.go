package serve_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// A server on loopback needs no token, so what a browser may send it
// matters: a body is taken only as Content-Type application/json (that
// media type exactly, parameters aside; none with a body is what a page
// can send without a preflight), and a POST a browser sends from a page of
// another origin is refused 403 cross_origin. Nothing refused is
// recorded; programs (no Origin) and same-origin pages are served.
func TestHTTP_BrowserRequestsFromElsewhereRefused(t *testing.T) {
	srv, st, _ := strictServer(t)
	host := strings.TrimPrefix(srv.url, "http://")
	begin := `{"session":"s-x","turn_id":"t-x"}`
	mediaType := func(ct string) serve.ErrorBody {
		return serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `Content-Type "` + ct + `" is not application/json`}
	}
	crossOrigin := func(origin string) serve.ErrorBody {
		return serve.ErrorBody{Error: serve.CodeCrossOrigin,
			Detail: `POST from a page of another origin (Origin "` + origin + `") is refused: the API takes requests from programs and from the pages this server serves`}
	}
	refused := []struct {
		name   string
		hdr    []string
		status int
		want   serve.ErrorBody
	}{
		{"no Content-Type", []string{"Content-Type", ""}, 415,
			serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: "a request body needs Content-Type: application/json"}},
		{"application/jsonx", []string{"Content-Type", "application/jsonx"}, 415, mediaType("application/jsonx")},
		{"application/json-patch+json", []string{"Content-Type", "application/json-patch+json"}, 415, mediaType("application/json-patch+json")},
		{"a list", []string{"Content-Type", "application/json, text/plain"}, 415, mediaType("application/json, text/plain")},
		{"text/plain", []string{"Content-Type", "text/plain"}, 415, mediaType("text/plain")},
		{"Origin of another site", []string{"Origin", "http://evil.example"}, 403, crossOrigin("http://evil.example")},
		{"Sec-Fetch-Site cross-site", []string{"Sec-Fetch-Site", "cross-site", "Origin", "http://evil.example"}, 403, crossOrigin("http://evil.example")},
		{"Sec-Fetch-Site same-site", []string{"Sec-Fetch-Site", "same-site"}, 403, crossOrigin("")},
	}
	before := testutil.LastSeq(t, st)
	for _, c := range refused {
		status, b := do(t, "POST", srv.url+"/v1/turns", begin, c.hdr...)
		if got := errorBody(t, b); status != c.status || got != c.want {
			t.Errorf("%s: %d %s, want %d %+v", c.name, status, b, c.status, c.want)
		}
	}
	if after := testutil.LastSeq(t, st); after != before {
		t.Fatalf("refused requests recorded: last seq %d → %d", before, after)
	}
	served := []struct {
		name string
		hdr  []string
	}{
		{"a program", nil},
		{"charset", []string{"Content-Type", "application/json; charset=utf-8"}},
		{"the server's own page", []string{"Origin", srv.url, "Sec-Fetch-Site", "same-origin"}},
		{"Origin of this host, no Sec-Fetch-Site", []string{"Origin", "http://" + host}},
	}
	for i, c := range served {
		body := strings.Replace(begin, "t-x", "t-"+string(rune('a'+i)), 1)
		if status, b := do(t, "POST", srv.url+"/v1/turns", body, c.hdr...); status != 200 {
			t.Errorf("%s: %d %s, want 200", c.name, status, b)
		}
	}
	// A body-less POST to a route whose body is optional needs no type.
	if status, b := do(t, "POST", srv.url+"/v1/sessions/main/s-x/reset", ""); status != 200 {
		t.Errorf("reset without a body: %d %s, want 200", status, b)
	}
	// Reads are not checked.
	if status, b := do(t, "GET", srv.url+"/v1/profiles", "", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"); status != 200 {
		t.Errorf("GET from another origin: %d %s, want 200", status, b)
	}
}

// A server without a token listens on loopback only, so a request whose
// Host is not a loopback name comes from a page of another site whose
// name was pointed at 127.0.0.1 (DNS rebinding): the browser's own origin
// checks see it as same-origin, so the server refuses it itself, reads
// included. Loopback names and addresses are served.
func TestHTTP_NonLoopbackHostRefusedWithoutToken(t *testing.T) {
	srv, _, _ := strictServer(t)
	port := srv.url[strings.LastIndexByte(srv.url, ':'):]
	get := func(host string) (int, []byte) {
		req, err := http.NewRequestWithContext(testutil.Context(t), "GET", srv.url+"/v1/profiles", nil)
		testutil.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		testutil.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, host := range []string{"rebind.evil.example" + port, "rebind.evil.example", "192.168.1.7" + port, "localhost.evil.example" + port} {
		want := serve.ErrorBody{Error: serve.CodeCrossOrigin, Detail: `Host "` + host + `" is not a loopback name: a server without a token answers only requests to localhost or a loopback address (a page of another site pointed at 127.0.0.1 is refused); serve other names with --token`}
		if status, b := get(host); status != 403 || errorBody(t, b) != want {
			t.Errorf("Host %s: %d %s, want 403 %+v", host, status, b, want)
		}
	}
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "LOCALHOST", "app.localhost" + port, "[::1]" + port, "127.0.0.2"} {
		if status, b := get(host); status != 200 {
			t.Errorf("Host %s: %d %s, want 200", host, status, b)
		}
	}
}
