package ui_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fledger/fledger/ui"
)

func TestFiles_EmbedsTheBundle(t *testing.T) {
	want := []string{"/ui/app.css", "/ui/app.js", "/ui/index.html"}
	if got := ui.Files(); !slices.Equal(got, want) {
		t.Fatalf("Files() = %v, want %v", got, want)
	}
}

func TestHandler_ServesThePage(t *testing.T) {
	mux := http.NewServeMux()
	for _, p := range ui.Patterns {
		mux.Handle(p, ui.Handler())
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		path, status, location, contentType, bodyHas string
	}{
		{"/ui", "301 Moved Permanently", "/ui/", "", ""},
		{"/ui?agent=main", "301 Moved Permanently", "/ui/?agent=main", "", ""},
		{"/ui/", "200 OK", "", "text/html; charset=utf-8", `<script src="app.js"></script>`},
		{"/ui/index.html", "200 OK", "", "text/html; charset=utf-8", "<title>fledger — incident viewer</title>"},
		{"/ui/app.js", "200 OK", "", "text/javascript; charset=utf-8", "/v1/timeline"},
		{"/ui/app.css", "200 OK", "", "text/css; charset=utf-8", ".timeline"},
		{"/ui/nope.js", "404 Not Found", "", "text/plain; charset=utf-8", "404 page not found: /ui/nope.js"},
		{"/ui/dist/", "404 Not Found", "", "text/plain; charset=utf-8", "404 page not found"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			res, err := client.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.Status != tc.status {
				t.Fatalf("status %q, want %q", res.Status, tc.status)
			}
			if got := res.Header.Get("Location"); got != tc.location {
				t.Errorf("Location %q, want %q", got, tc.location)
			}
			if tc.contentType != "" && res.Header.Get("Content-Type") != tc.contentType {
				t.Errorf("Content-Type %q, want %q", res.Header.Get("Content-Type"), tc.contentType)
			}
			if !strings.Contains(string(body), tc.bodyHas) {
				t.Errorf("body lacks %q", tc.bodyHas)
			}
			if res.StatusCode == 200 {
				if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
					t.Errorf("Cache-Control %q", cc)
				}
				if res.Header.Get("ETag") == "" {
					t.Error("no ETag")
				}
			}
		})
	}
	// An unchanged file revalidates to 304.
	res, err := client.Get(srv.URL + "/ui/app.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/ui/app.js", nil)
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	res2, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %s, want 304", res2.Status)
	}
}

// The bundle stays small: the page is a few tools, not an application.
func TestBundle_IsSmall(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /ui/", ui.Handler())
	total := 0
	for _, f := range ui.Files() {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", f, nil))
		total += rec.Body.Len()
	}
	if total > 150<<10 {
		t.Errorf("the page is %d bytes, over the 150 KiB budget", total)
	}
}
