package serve_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// The viewer page (package ui) is mounted at /ui: its static files are
// open even with a token, the API behind it is not. The page is no
// operation of the JSON API, so its answers are read here straight from
// Service.Handler, without the contract check of startServer.
func TestHTTP_ViewerPageIsOpen(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) { c.Token = "s3cret" })
	hs := httptest.NewServer(srv.svc.Handler())
	t.Cleanup(hs.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		method, path string
		status       int
		header, want string
	}{
		{"GET", "/ui", 301, "Location", "/ui/"},
		{"GET", "/ui/", 200, "Content-Type", "text/html; charset=utf-8"},
		{"HEAD", "/ui/app.js", 200, "Content-Type", "text/javascript; charset=utf-8"},
		{"GET", "/ui/app.css", 200, "Content-Type", "text/css; charset=utf-8"},
		{"GET", "/ui/missing.js", 404, "", ""},
		{"POST", "/ui/", 401, "", ""}, // like any unmatched route when a token is set
		{"GET", "/v1/profiles", 401, "WWW-Authenticate", `Bearer realm="fledger"`},
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, hs.URL+tc.path, nil)
		testutil.NoError(t, err)
		res, err := client.Do(req)
		testutil.NoError(t, err)
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
		}
		if tc.header != "" && res.Header.Get(tc.header) != tc.want {
			t.Errorf("%s %s: %s %q, want %q", tc.method, tc.path, tc.header, res.Header.Get(tc.header), tc.want)
		}
	}
}
