// Package ui serves the incident viewer page (issue #21): src/index.html,
// src/app.css and dist/app.js (bundled from src/*.ts by `npm run build`
// and committed), embedded so `fledger serve` and `fledger view` serve it
// without node. The page reads only the /v1 API; its files need no token.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"time"
)

//go:embed src/index.html src/app.css dist/app.js
var files embed.FS

// served are the embedded files by the name they are served under.
var served = map[string]string{"index.html": "src/index.html", "app.css": "src/app.css", "app.js": "dist/app.js"}

// Patterns are the ServeMux patterns [Handler] answers: the page at /ui
// (redirected to /ui/) and its files under /ui/.
var Patterns = []string{"GET /ui", "GET /ui/"}

// Files lists the paths the embedded files are served at, sorted.
func Files() []string {
	out := make([]string, 0, len(served))
	for name := range served {
		out = append(out, "/ui/"+name)
	}
	sort.Strings(out)
	return out
}

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves GET (and HEAD) /ui as a redirect to /ui/, /ui/ as
// index.html and /ui/NAME as the embedded file NAME, with its content
// type, an ETag and Cache-Control: no-cache (the names carry no hash, so
// the browser revalidates and gets 304 while unchanged); anything else
// under /ui/ is 404, never a directory listing.
func Handler() http.Handler {
	assets := map[string]asset{}
	for name, file := range served {
		b, err := fs.ReadFile(files, file)
		if err != nil {
			panic("ui: reading embedded " + file + ": " + err.Error())
		}
		sum := sha256.Sum256(b)
		var ct string
		switch path.Ext(name) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".html":
			ct = "text/html; charset=utf-8"
		}
		assets[name] = asset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ui" {
			target := "/ui/"
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(w, r, target, http.StatusMovedPermanently)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/ui/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		if !ok {
			http.Error(w, "404 page not found: "+r.URL.Path, http.StatusNotFound)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("ETag", a.etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}
