package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/ui"
)

// Route is one HTTP route the service registers.
type Route struct {
	Method, Path string
}

// Routes lists every route of [Service.Handler] (schemas/openapi.v1.yaml
// documents each; a test checks it).
var Routes = []Route{
	{"POST", "/v1/turns"},
	{"GET", "/v1/turns/{turn_id}"},
	{"POST", "/v1/turns/{turn_id}/outcomes"},
	{"POST", "/v1/turns/{turn_id}/resume"},
	{"GET", "/v1/sessions/{agent}/{session}"},
	{"POST", "/v1/sessions/{agent}/{session}/model"},
	{"POST", "/v1/sessions/{agent}/{session}/reset"},
	{"POST", "/v1/sessions/{agent}/{session}/pin"},
	{"POST", "/v1/sessions/{agent}/{session}/compaction"},
	{"POST", "/v1/agents/{agent}/auth/order/{provider}"},
	{"GET", "/v1/profiles"},
	{"GET", "/v1/decisions"},
	{"GET", "/v1/timeline"},
	{"GET", "/v1/turns/{turn_id}/explanation"},
	{"POST", "/v1/what-if"},
	{"GET", "/healthz"},
	{"GET", "/readyz"},
	{"GET", "/metrics"},
}

// Handler returns the JSON HTTP API: the routes of [Routes], each request
// body limited to MaxBytesReader(Config.MaxBodyBytes) and decoded with
// unknown fields refused, the bearer token checked in constant time (when
// Config.Token is set; /healthz is open), every error answered as
// [ErrorBody] with its status, and a panic answered 500 and logged —
// never a stack trace to the client.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	h := map[string]http.Handler{
		"POST /v1/turns": jsonOp(s, bodyRequired, func(r *http.Request, q *BeginRequest) error { return nil }, s.Begin),
		"GET /v1/turns/{turn_id}": jsonOp(s, noBody, func(r *http.Request, q *TurnRef) error {
			q.TurnID, q.Agent = r.PathValue("turn_id"), r.URL.Query().Get("agent")
			return nil
		}, s.Turn),
		"POST /v1/turns/{turn_id}/outcomes": jsonOp(s, bodyRequired, func(r *http.Request, q *OutcomeRequest) error {
			return pathField(&q.TurnID, "turn_id", r.PathValue("turn_id"))
		}, s.Outcome),
		"POST /v1/turns/{turn_id}/resume": jsonOp(s, bodyOptional, func(r *http.Request, q *TurnRef) error {
			return pathField(&q.TurnID, "turn_id", r.PathValue("turn_id"))
		}, s.Resume),
		"GET /v1/sessions/{agent}/{session}": jsonOp(s, noBody, func(r *http.Request, q *SessionRef) error {
			q.Agent, q.Session = r.PathValue("agent"), r.PathValue("session")
			return nil
		}, s.Session),
		"POST /v1/sessions/{agent}/{session}/model": jsonOp(s, bodyRequired, func(r *http.Request, q *ModelRequest) error {
			return sessionPath(r, &q.Agent, &q.Session)
		}, s.SelectModel),
		"POST /v1/sessions/{agent}/{session}/reset": jsonOp(s, bodyOptional, func(r *http.Request, q *ResetRequest) error {
			return sessionPath(r, &q.Agent, &q.Session)
		}, s.Reset),
		"POST /v1/sessions/{agent}/{session}/pin": jsonOp(s, bodyRequired, func(r *http.Request, q *PinRequest) error {
			return sessionPath(r, &q.Agent, &q.Session)
		}, s.Pin),
		"POST /v1/sessions/{agent}/{session}/compaction": jsonOp(s, bodyOptional, func(r *http.Request, q *SessionRef) error {
			return sessionPath(r, &q.Agent, &q.Session)
		}, s.Compaction),
		"POST /v1/agents/{agent}/auth/order/{provider}": jsonOp(s, bodyOptional, func(r *http.Request, q *AuthOrderRequest) error {
			if err := pathField(&q.Agent, "agent", r.PathValue("agent")); err != nil {
				return err
			}
			return pathField(&q.Provider, "provider", r.PathValue("provider"))
		}, s.SetAuthOrder),
		"GET /v1/profiles": jsonOp(s, noBody, func(r *http.Request, q *ProfilesRequest) error {
			q.Agent = r.URL.Query().Get("agent")
			return nil
		}, s.Profiles),
		"GET /v1/decisions": jsonOp(s, noBody, func(r *http.Request, q *DecisionsRequest) error {
			v := r.URL.Query()
			q.Agent, q.Since = v.Get("agent"), v.Get("since")
			var err error
			if x := v.Get("from_seq"); x != "" {
				if q.FromSeq, err = parseFromSeq(x); err != nil {
					return err
				}
			}
			q.Until, q.Provider, q.Reason, q.Outcome = v.Get("until"), v.Get("provider"), v.Get("reason"), v.Get("outcome")
			return queryLimit(v, &q.Limit)
		}, s.Decisions),
		"GET /v1/timeline": jsonOp(s, noBody, func(r *http.Request, q *TimelineRequest) error {
			v := r.URL.Query()
			q.Agent, q.Since, q.Until = v.Get("agent"), v.Get("since"), v.Get("until")
			return queryLimit(v, &q.Limit)
		}, s.Timeline),
		"GET /v1/turns/{turn_id}/explanation": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, err := s.Explanation(r.Context(), &ExplanationRequest{TurnID: r.PathValue("turn_id"), Agent: r.URL.Query().Get("agent")})
			if err != nil {
				s.answerError(w, r, err)
				return
			}
			// Byte for byte what `fledger explain TURN_ID --json` prints.
			var b bytes.Buffer
			if err := replay.WriteJSON(&b, x); err != nil {
				s.answerError(w, r, err)
				return
			}
			writeBody(w, http.StatusOK, b.Bytes())
		}),
		"POST /v1/what-if": jsonOp(s, bodyRequired, func(r *http.Request, q *WhatIfRequest) error { return nil }, s.WhatIf),
		"GET /healthz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, code := s.Health(r.Context())
			writeJSON(w, code, h)
		}),
		"GET /readyz": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Ready = Health's status code: 200 when the store is
			// connected, the stream has a leader and appends are being
			// stored, else 503.
			h, code := s.Health(r.Context())
			writeJSON(w, code, h)
		}),
		"GET /metrics": s.metrics.handler,
	}
	for _, rt := range Routes {
		op := rt.Method + " " + rt.Path
		hh := h[op]
		if s.cfg.ReadOnly && rt.Method == http.MethodPost && !slices.Contains(ReadOnlyPosts, op) {
			hh = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, apiErr(http.StatusForbidden, CodeReadOnly, "%s records on the ledger; this server is read-only (fledger view): it takes reads and POST /v1/what-if only", op))
			})
		}
		mux.Handle(op, strictRequest(op, RouteQuery[op], hh))
	}
	uh := ui.Handler() // the incident viewer page (static; its /v1 calls carry the token)
	for _, p := range ui.Patterns {
		mux.Handle(p, uh)
	}
	return s.guard(mux)
}

// ReadOnlyPosts are the POST routes a read-only server (Config.ReadOnly,
// `fledger view`) still takes: they record nothing. Every other POST is
// answered 403 read_only.
var ReadOnlyPosts = []string{"POST /v1/what-if"}

// queryLimit reads a positive query parameter limit into dst (absent: 0).
func queryLimit(v url.Values, dst *int) error {
	x := v.Get("limit")
	if x == "" {
		return nil
	}
	n, err := parseLimit(x)
	if err != nil {
		return err
	}
	*dst = n
	return nil
}

// parseLimit reads a given limit, the text of a query value or of the
// micro request's JSON number: a positive integer ("0" is refused: an
// absent limit is the default page).
func parseLimit(x string) (int, error) {
	n, err := strconv.Atoi(x)
	if err != nil || n < 1 {
		return 0, apiErr(http.StatusBadRequest, CodeInvalidRequest, "limit %q is not a positive number", x)
	}
	return n, nil
}

// parseFromSeq reads a given from_seq, the text of a query value or of
// the micro request's JSON number: a stream sequence (0 = from the
// start).
func parseFromSeq(x string) (uint64, error) {
	n, err := strconv.ParseUint(x, 10, 64)
	if err != nil {
		return 0, apiErr(http.StatusBadRequest, CodeInvalidRequest, "from_seq %q is not a stream sequence", x)
	}
	return n, nil
}

// OpenRoutes are the routes answered without the token (health checks
// of load balancers and orchestrators, and the viewer page's static files).
var OpenRoutes = append([]string{"GET /healthz", "GET /readyz"}, ui.Patterns...)

// RouteQuery lists the query parameters each route takes, every route
// (every other parameter, or one given twice, is refused with 400 naming
// these; schemas/openapi.v1.yaml declares the same, a test checks it).
// No POST takes any: its request is its body.
var RouteQuery = map[string][]string{
	"POST /v1/turns":                                 {},
	"GET /v1/turns/{turn_id}":                        {"agent"},
	"POST /v1/turns/{turn_id}/outcomes":              {},
	"POST /v1/turns/{turn_id}/resume":                {},
	"GET /v1/sessions/{agent}/{session}":             {},
	"POST /v1/sessions/{agent}/{session}/model":      {},
	"POST /v1/sessions/{agent}/{session}/reset":      {},
	"POST /v1/sessions/{agent}/{session}/pin":        {},
	"POST /v1/sessions/{agent}/{session}/compaction": {},
	"POST /v1/agents/{agent}/auth/order/{provider}":  {},
	"GET /v1/profiles":                               {"agent"},
	"GET /v1/decisions":                              {"agent", "from_seq", "since", "limit", "until", "provider", "reason", "outcome"},
	"GET /v1/timeline":                               {"agent", "since", "until", "limit"},
	"GET /v1/turns/{turn_id}/explanation":            {"agent"},
	"POST /v1/what-if":                               {},
	"GET /healthz":                                   {},
	"GET /readyz":                                    {},
	"GET /metrics":                                   {},
}

// strictRequest refuses, before op runs (so before anything is
// recorded), a request to op whose query has a pair Go cannot parse (a
// ";" in it, a bad %-escape: url.Values would drop it silently), a
// parameter op does not take, or one it takes given more than once (a
// misspelt or repeated parameter would otherwise be ignored, or its first
// value silently win); and a GET that carries a body, which it would
// ignore.
func strictRequest(op string, takes []string, next http.Handler) http.Handler {
	known := map[string]bool{}
	for _, n := range takes {
		known[n] = true
	}
	takesWhat := "no query parameters"
	if len(takes) > 0 {
		takesWhat = "only " + strings.Join(takes, ", ") + ", each at most once"
	}
	get := strings.HasPrefix(op, http.MethodGet+" ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if get && r.ContentLength != 0 {
			writeError(w, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s takes no request body; send its input in the path and query", op))
			return
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeError(w, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s: %s takes %s", badQueryPair(r.URL.RawQuery), op, takesWhat))
			return
		}
		names := make([]string, 0, len(q))
		for n := range q {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var what string
			switch {
			case !known[n]:
				what = fmt.Sprintf("unknown query parameter %q", n)
			case len(q[n]) > 1:
				what = fmt.Sprintf("query parameter %q is given %d times", n, len(q[n]))
			default:
				continue
			}
			writeError(w, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s: %s takes %s", what, op, takesWhat))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// badQueryPair names the first pair of a raw query that url.ParseQuery
// refuses, and why.
func badQueryPair(raw string) string {
	for pair := range strings.SplitSeq(raw, "&") {
		if _, err := url.ParseQuery(pair); err != nil {
			if strings.Contains(pair, ";") {
				return fmt.Sprintf("query pair %q has a \";\" (separate parameters with \"&\", escape a \";\" in a value as %%3B)", pair)
			}
			return fmt.Sprintf("query pair %q is not URL-encoded: %v", pair, err)
		}
	}
	return fmt.Sprintf("query %q does not parse", raw)
}

// crossOrigin refuses non-safe browser requests from another origin
// (CSRF), by Sec-Fetch-Site or Origin against Host.
var crossOrigin = http.NewCrossOriginProtection()

// loopbackHost reports whether host (a request's Host: name or address,
// with or without a port; "" from an HTTP/1.0 client) names the loopback
// interface: localhost, a name under .localhost, or a loopback address.
func loopbackHost(host string) bool {
	if host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard wraps the mux: recover, metrics, auth, JSON 404/405.
func (s *Service) guard(mux *http.ServeMux) http.Handler {
	var want [32]byte
	if s.cfg.Token != "" {
		want = sha256.Sum256([]byte(s.cfg.Token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &statusWriter{ResponseWriter: w}
		_, pattern := mux.Handler(r)
		route := pattern
		if route == "" {
			route = "unmatched"
		}
		defer func() {
			if p := recover(); p != nil {
				id := uuid.NewString()
				s.cfg.Log.Error("serve: panic", "request", id, "route", route, "panic", fmt.Sprint(p))
				if rw.status == 0 {
					writeError(rw, apiErr(http.StatusInternalServerError, CodeInternal, "internal error (request %s)", id))
				}
			}
			s.metrics.observe(route, rw.code(), time.Since(start))
		}()
		if s.cfg.Token == "" && !loopbackHost(r.Host) {
			// A server without a token listens on loopback only; a name
			// that is not a loopback one is a page of another site whose
			// name was pointed at 127.0.0.1 (DNS rebinding), to which the
			// browser's own origin checks would let it through.
			writeError(rw, apiErr(http.StatusForbidden, CodeCrossOrigin, "Host %q is not a loopback name: a server without a token answers only requests to localhost or a loopback address (a page of another site pointed at 127.0.0.1 is refused); serve other names with --token", r.Host))
			return
		}
		if err := crossOrigin.Check(r); s.cfg.Token == "" && err != nil {
			// A page of another site posting to a server without a token
			// (loopback needs none): programs send no Origin, and the
			// pages this server serves itself are same-origin. With a
			// token a browser sends nothing it could forge a write with.
			writeError(rw, apiErr(http.StatusForbidden, CodeCrossOrigin, "%s from a page of another origin (Origin %q) is refused: the API takes requests from programs and from the pages this server serves", r.Method, r.Header.Get("Origin")))
			return
		}
		if s.cfg.Token != "" && !slices.Contains(OpenRoutes, pattern) {
			got, ok := bearerToken(r.Header.Get("Authorization"))
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				rw.Header().Set("WWW-Authenticate", `Bearer realm="fledger"`)
				writeError(rw, apiErr(http.StatusUnauthorized, CodeUnauthorized, "a valid Authorization: Bearer <token> header is required"))
				return
			}
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			// On any path, refused before reading; the body is read and
			// discarded so the client, still sending, reads this 413
			// instead of a connection reset — unless the client waits for
			// "100 Continue" before sending it: then it is never sent.
			if !strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
				drainBody(rw, r)
			}
			writeError(rw, tooLarge(s.cfg.MaxBodyBytes))
			return
		}
		if !cleanPath(r.URL.EscapedPath()) {
			// ServeMux would answer a bare 307 to the cleaned path
			// ("//v1/turns", "/v1/./turns"), and a wrong method there 405:
			// answer 404 in the API's format, whatever the method.
			route = "unmatched"
			writeError(rw, apiErr(http.StatusNotFound, CodeNotFound, "no route %s %s (paths have no empty, . or .. segments)", r.Method, r.URL.EscapedPath()))
			return
		}
		if pattern == "" {
			writeError(rw, s.unmatched(mux, r))
			return
		}
		mux.ServeHTTP(rw, r)
	})
}

// unmatched tells a wrong method on a known path (405, with Allow naming
// the methods the path takes; HEAD is answered wherever GET is) from an
// unknown path (404).
func (s *Service) unmatched(mux *http.ServeMux, r *http.Request) *APIError {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, p := mux.Handler(r2); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		return apiErr(http.StatusNotFound, CodeNotFound, "no route %s %s", r.Method, r.URL.Path)
	}
	e := apiErr(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s (use %s)", r.Method, r.URL.Path, strings.Join(allow, " or "))
	e.Allow = strings.Join(allow, ", ")
	return e
}

type bodyRule int

const (
	noBody bodyRule = iota
	bodyOptional
	bodyRequired
)

// jsonOp adapts an operation to HTTP: decode the body (size-limited,
// unknown fields refused, exactly one JSON object), fill path and query
// fields, run op, answer its result or its error.
func jsonOp[Req, Resp any](s *Service, rule bodyRule, fill func(*http.Request, *Req) error,
	op func(context.Context, *Req) (*Resp, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := new(Req)
		if rule != noBody {
			if err := decodeBody(w, r, s.cfg.MaxBodyBytes, q, rule == bodyRequired); err != nil {
				writeError(w, err)
				return
			}
		}
		if err := fill(r, q); err != nil {
			s.answerError(w, r, err)
			return
		}
		resp, err := op(r.Context(), q)
		if err != nil {
			s.answerError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any, required bool) *APIError {
	ct := r.Header.Get("Content-Type")
	if ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return apiErr(http.StatusUnsupportedMediaType, CodeInvalidRequest, "Content-Type %q is not application/json", ct)
		}
	}
	if ae := contentEncodingProblem(r.Header.Values("Content-Encoding")); ae != nil {
		return ae
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		drainBody(w, r)
		return tooLarge(mb.Limit)
	case err != nil:
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "the request body could not be read: %v", err)
	case ct == "" && len(bytes.TrimSpace(raw)) > 0:
		// A body without a type is what a page of another site can
		// send without asking the server first (a "simple" request).
		return apiErr(http.StatusUnsupportedMediaType, CodeInvalidRequest, "a request body needs Content-Type: application/json")
	}
	return decodeRequest(raw, v, required)
}

// contentEncodingProblem refuses (415) a request whose Content-Encoding
// (values, every header line) names an encoding other than identity: a
// body is read as it arrives, so a gzip or br body would otherwise be
// refused as malformed JSON at its first byte.
func contentEncodingProblem(values []string) *APIError {
	for _, v := range values {
		for _, enc := range strings.Split(v, ",") {
			if enc = strings.TrimSpace(enc); enc != "" && !strings.EqualFold(enc, "identity") {
				return apiErr(http.StatusUnsupportedMediaType, CodeInvalidRequest,
					"Content-Encoding %q is not taken: a request body must be JSON as is (identity encoding, no compression)", strings.Join(values, ", "))
			}
		}
	}
	return nil
}

// maxDrainBytes bounds how much of an oversized body is read and
// discarded before the 413 is answered. Go's server stops reading a
// refused body and closes the connection; a client still sending its body
// then gets a connection reset instead of the answer. Draining lets it
// finish sending and read the 413 (the server's ReadTimeout still bounds
// the time spent); a larger body is not drained and the connection closes.
const maxDrainBytes = 64 << 20

func drainBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > maxDrainBytes {
		w.Header().Set("Connection", "close")
		return
	}
	if _, err := io.CopyN(io.Discard, r.Body, maxDrainBytes); err == nil {
		w.Header().Set("Connection", "close") // more than maxDrainBytes: not drained to the end
	}
}

func tooLarge(limit int64) *APIError {
	return apiErr(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "the request body is larger than %d bytes", limit)
}

// cleanPath reports whether p (an escaped URL path) is in the form
// ServeMux routes without redirecting: rooted, no empty, "." or ".."
// segments.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np == p
}

func pathField(dst *string, name, v string) error {
	if *dst != "" && *dst != v {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q in the body differs from the path's %q", name, *dst, v)
	}
	*dst = v
	return nil
}

func sessionPath(r *http.Request, agent, session *string) error {
	if err := pathField(agent, "agent", r.PathValue("agent")); err != nil {
		return err
	}
	return pathField(session, "session", r.PathValue("session"))
}

// answerError answers a known error with its status; anything else is
// logged and answered 500 without its text.
func (s *Service) answerError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, engine.ErrInvalidDecision) {
		writeError(w, s.invalidDecision(err, "method", r.Method, "path", r.URL.Path))
		return
	}
	if ae, ok := toAPI(err); ok {
		writeError(w, ae)
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Answered like a store outage (a long election ends a request's
		// time too): Retry-After, and whether a write may be recorded.
		ae := apiErr(http.StatusServiceUnavailable, CodeUnavailable, "the request was cancelled or timed out")
		ae.RetryAfterMs, ae.Recorded = unavailableRetryMs, RecordedNo
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			ae.Recorded = RecordedUnknown
			ae.Detail += ": it may be recorded; re-send the same request — it is idempotent and is recorded once"
		}
		writeError(w, ae)
		return
	}
	id := uuid.NewString()
	s.cfg.Log.Error("serve: request failed", "request", id, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, apiErr(http.StatusInternalServerError, CodeInternal, "internal error (request %s)", id))
}

func writeError(w http.ResponseWriter, e *APIError) {
	if e.Allow != "" {
		w.Header().Set("Allow", e.Allow)
	}
	if e.RetryAfterMs > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((e.RetryAfterMs+999)/1000, 10))
	}
	writeJSON(w, e.Status, ErrorBody{Error: e.Code, Detail: clipDetail(e.Detail), Recorded: e.Recorded})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := encodeJSON(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal","detail":"response encoding failed"}`)
	}
	writeBody(w, status, append(b, '\n'))
}

// writeBody answers the JSON body b (ending in a newline) with status.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// encodeJSON is json.Marshal without HTML escaping: a body is JSON for
// programs, so "<" in an error preview stays "<" (not "\u003c"), as in
// `fledger decisions --json` and the JSONL export.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
