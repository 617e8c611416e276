package serve_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

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

// A server with a token may listen on any address and be reached by any
// name (a load balancer's, a proxy's), from a page whose Origin is not the
// Host it sees: the token, not the Host or Origin, admits.
func TestHTTP_TokenServesAnyHost(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) { c.Token = "s3cret" })
	req, err := http.NewRequestWithContext(testutil.Context(t), "POST", srv.url+"/v1/what-if", strings.NewReader(`{}`))
	testutil.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Host = "fledger.internal.example:443"
	req.Header.Set("Authorization", "Bearer s3cret")
	// Behind a proxy that rewrites Host, a page's Origin differs from the
	// Host the server sees; with a token no browser request is forged.
	req.Header.Set("Origin", "http://view.corp.example")
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		t.Fatalf("POST with the token, another Host and Origin: %d, want it past the guard", resp.StatusCode)
	}
}
