package serve_test

import (
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
