package serve_test

import (
	"net/http"
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
// name (a load balancer's, a proxy's): the token, not the Host, admits.
func TestHTTP_TokenServesAnyHost(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) { c.Token = "s3cret" })
	req, err := http.NewRequestWithContext(testutil.Context(t), "GET", srv.url+"/v1/profiles", nil)
	testutil.NoError(t, err)
	req.Host = "fledger.internal.example:443"
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	testutil.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("Host fledger.internal.example with the token: %d, want 200", resp.StatusCode)
	}
}
