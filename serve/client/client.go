// Package client is a small Go client of the `fledger serve` HTTP API
// (schemas/openapi.v1.yaml) for gateways written in Go that want the
// failover ledger without embedding it. It depends on the standard
// library only.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one fledger server.
type Client struct {
	// BaseURL is the server, e.g. "http://127.0.0.1:7400".
	BaseURL string
	// Token, when set, is sent as a bearer token.
	Token string
	// HTTP is the HTTP client (default http.DefaultClient).
	HTTP *http.Client
	// RetryFor bounds how long a request answered 503 (the event store
	// unavailable, e.g. during a stream leader election, or contention) is
	// retried, waiting as Retry-After says (default [DefaultRetryFor];
	// negative = never retry). Turn operations are idempotent and retried
	// whatever the 503 says; session commands only when nothing was
	// recorded.
	RetryFor time.Duration
}

// DefaultRetryFor is how long a 503 is retried by default: longer than a
// 3-node cluster's stream leader election plus the server's own retry.
const DefaultRetryFor = 30 * time.Second

// New returns a client of baseURL.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token}
}

// Error is an error answer: the HTTP status and the server's {error,
// detail}.
type Error struct {
	Status int
	Code   string `json:"error"`
	Detail string `json:"detail"`
	// Recorded, on 503 unavailable: "no" (nothing was recorded) or
	// "unknown" (re-send the same request: it is recorded once).
	Recorded string `json:"recorded,omitempty"`
	// RetryAfter is the answer's Retry-After (0 = none).
	RetryAfter time.Duration `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("fledger: %d %s: %s", e.Status, e.Code, e.Detail) }

// Next is what the gateway does now (see the server's documentation).
type Next struct {
	Action                string             `json:"action"`
	Provider              string             `json:"provider,omitempty"`
	Model                 string             `json:"model,omitempty"`
	Profile               string             `json:"profile,omitempty"`
	Attempt               int                `json:"attempt,omitempty"`
	Kind                  string             `json:"kind,omitempty"`
	CandidateIndex        int                `json:"candidate_index,omitempty"`
	Round                 int                `json:"round,omitempty"`
	Ms                    int64              `json:"ms,omitempty"`
	ResumeAt              int64              `json:"resume_at,omitempty"`
	AnsweredBy            string             `json:"answered_by,omitempty"`
	Summary               string             `json:"summary,omitempty"`
	RawError              bool               `json:"raw_error,omitempty"`
	Attempts              []ExhaustedAttempt `json:"attempts,omitempty"`
	SoonestCooldownExpiry int64              `json:"soonest_cooldown_expiry,omitempty"`
	Disposition           string             `json:"disposition,omitempty"`
	Reason                string             `json:"reason,omitempty"`
	Message               string             `json:"message,omitempty"`
	SwitchTo              string             `json:"switch_to,omitempty"`
	Notices               []Notice           `json:"notices"`
}

// ExhaustedAttempt is one failed or skipped candidate of an exhausted turn.
type ExhaustedAttempt struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Reason   string `json:"reason"`
	Status   int    `json:"status,omitempty"`
	Code     string `json:"code,omitempty"`
	Error    string `json:"error"`
}

// Notice is a user-visible notice.
type Notice struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

// Step is the answer to a turn operation.
type Step struct {
	TurnID   string `json:"turn_id"`
	Agent    string `json:"agent"`
	Next     Next   `json:"next"`
	Replayed bool   `json:"replayed,omitempty"`
}

// BeginRequest opens a turn.
type BeginRequest struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session"`
	Chat    string `json:"chat,omitempty"`
	Model   string `json:"model,omitempty"`
	Source  string `json:"source,omitempty"`
	// Fallbacks is a cron payload's payload.fallbacks (source cron only;
	// an empty list is a strict run, nil the configured fallbacks).
	Fallbacks *[]string `json:"fallbacks,omitempty"`
	// FallbacksOverride is the caller's fallbacksOverride (any source;
	// the chain is the selected model then exactly these, [] = strict).
	FallbacksOverride *[]string `json:"fallbacks_override,omitempty"`
	TurnID            string    `json:"turn_id,omitempty"`
}

// ProviderError is a provider call's error as the gateway saw it.
type ProviderError struct {
	Status  int               `json:"status,omitempty"`
	Code    string            `json:"code,omitempty"`
	Type    string            `json:"type,omitempty"`
	Message string            `json:"message,omitempty"`
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Name    string            `json:"name,omitempty"`
}

// Outcome is an attempt's outcome: OK, or Error.
type Outcome struct {
	Attempt       int            `json:"attempt"`
	OK            bool           `json:"ok,omitempty"`
	Error         *ProviderError `json:"error,omitempty"`
	LatencyMs     int64          `json:"latency_ms,omitempty"`
	OutputStarted bool           `json:"output_started,omitempty"`
	ToolStarted   bool           `json:"tool_started,omitempty"`
	// ToolBatchSettled: the call continued after a settled tool batch.
	ToolBatchSettled bool `json:"tool_batch_settled,omitempty"`
}

// Begin opens a turn: POST /v1/turns.
// Without a TurnID the client picks one, so a begin it re-sends (after a
// 503 or a lost answer) opens the turn once.
func (c *Client) Begin(ctx context.Context, r BeginRequest) (*Step, error) {
	if r.TurnID == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		r.TurnID = "t-" + hex.EncodeToString(b[:])
	}
	var out Step
	return &out, c.send(ctx, http.MethodPost, "/v1/turns", r, &out, true)
}

// Report reports an attempt's outcome: POST /v1/turns/{id}/outcomes.
func (c *Client) Report(ctx context.Context, turnID string, o Outcome) (*Step, error) {
	var out Step
	return &out, c.send(ctx, http.MethodPost, "/v1/turns/"+url.PathEscape(turnID)+"/outcomes", o, &out, true)
}

// Resume continues a turn after a wait: POST /v1/turns/{id}/resume.
func (c *Client) Resume(ctx context.Context, turnID string) (*Step, error) {
	var out Step
	return &out, c.send(ctx, http.MethodPost, "/v1/turns/"+url.PathEscape(turnID)+"/resume", nil, &out, true)
}

// Turn reads a turn (GET /v1/turns/{id}) into out (any JSON shape).
func (c *Client) Turn(ctx context.Context, turnID string, out any) error {
	return c.do(ctx, http.MethodGet, "/v1/turns/"+url.PathEscape(turnID), nil, out)
}

// SelectModel is `/model` on a session; model "default" clears it.
func (c *Client) SelectModel(ctx context.Context, agent, session, model, source, profile string, out any) error {
	body := map[string]string{"model": model}
	if source != "" {
		body["source"] = source
	}
	if profile != "" {
		body["profile"] = profile
	}
	return c.do(ctx, http.MethodPost, sessionPath(agent, session)+"/model", body, out)
}

// Reset is `/new` (kind new) or `/reset`.
func (c *Client) Reset(ctx context.Context, agent, session, kind string, out any) error {
	return c.do(ctx, http.MethodPost, sessionPath(agent, session)+"/reset", map[string]string{"kind": kind}, out)
}

// Pin pins an auth profile (source user | auto).
func (c *Client) Pin(ctx context.Context, agent, session, profile, source string, out any) error {
	body := map[string]string{"profile": profile}
	if source != "" {
		body["source"] = source
	}
	return c.do(ctx, http.MethodPost, sessionPath(agent, session)+"/pin", body, out)
}

// Session reads a session: GET /v1/sessions/{agent}/{session}.
func (c *Client) Session(ctx context.Context, agent, session string, out any) error {
	return c.do(ctx, http.MethodGet, sessionPath(agent, session), nil, out)
}

// Profile is one auth profile's usageStats.
type Profile struct {
	ID             string         `json:"id"`
	Provider       string         `json:"provider,omitempty"`
	LastUsed       int64          `json:"lastUsed,omitempty"`
	ErrorCount     int            `json:"errorCount"`
	FailureCounts  map[string]int `json:"failureCounts,omitempty"`
	LastFailureAt  int64          `json:"lastFailureAt,omitempty"`
	CooldownUntil  int64          `json:"cooldownUntil,omitempty"`
	CooldownReason string         `json:"cooldownReason,omitempty"`
	CooldownModel  string         `json:"cooldownModel,omitempty"`
	DisabledUntil  int64          `json:"disabledUntil,omitempty"`
	DisabledReason string         `json:"disabledReason,omitempty"`
	BlockedUntil   int64          `json:"blockedUntil,omitempty"`
	BlockedReason  string         `json:"blockedReason,omitempty"`
	BlockedSource  string         `json:"blockedSource,omitempty"`
	BlockedModel   string         `json:"blockedModel,omitempty"`
	Usable         bool           `json:"usable"`
}

// Profiles reads usageStats: GET /v1/profiles (agent "" = the default).
func (c *Client) Profiles(ctx context.Context, agent string) ([]Profile, error) {
	var out struct {
		Profiles []Profile `json:"profiles"`
	}
	p := "/v1/profiles"
	if agent != "" {
		p += "?agent=" + url.QueryEscape(agent)
	}
	return out.Profiles, c.do(ctx, http.MethodGet, p, nil, &out)
}

// DecisionsQuery selects a page of decision records (GET /v1/decisions).
type DecisionsQuery struct {
	// Agent is whose records are read ("" = the server's default agent).
	Agent string
	// FromSeq is the first stream sequence read, inclusive (0 = from the
	// start); pass a page's next_from_seq to read on.
	FromSeq uint64
	// Since keeps only records decided at or after it (zero = all); sent
	// as RFC 3339.
	Since time.Time
	// Limit bounds the page (0 = the server's default, 500); a commit is
	// never split, so a page may hold more when one commit does.
	Limit int
}

// values is q as query parameters.
func (q DecisionsQuery) values() url.Values {
	v := url.Values{}
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if q.FromSeq != 0 {
		v.Set("from_seq", strconv.FormatUint(q.FromSeq, 10))
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// Decisions reads the page of decision records q selects into out (any
// JSON shape: {decisions, next_from_seq, checkpoint}).
func (c *Client) Decisions(ctx context.Context, q DecisionsQuery, out any) error {
	p := "/v1/decisions"
	if v := q.values(); len(v) > 0 {
		p += "?" + v.Encode()
	}
	return c.do(ctx, http.MethodGet, p, nil, out)
}

func sessionPath(agent, session string) string {
	return "/v1/sessions/" + url.PathEscape(agent) + "/" + url.PathEscape(session)
}

// Do sends one request with a JSON body (nil = none) and decodes a 2xx
// answer into out; any other status is an *[Error]. A GET answered 503
// is retried as [Client.RetryFor] says; other methods are sent once.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.do(ctx, method, path, body, out)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	return c.send(ctx, method, path, body, out, method == http.MethodGet)
}

// send is one request, retried while it is answered 503 and may be
// retried (see Client.RetryFor); idempotent says a write whose outcome is
// unknown may be re-sent.
func (c *Client) send(ctx context.Context, method, path string, body, out any, idempotent bool) error {
	limit := c.RetryFor
	if limit == 0 {
		limit = DefaultRetryFor
	}
	deadline := time.Now().Add(limit)
	for {
		err := c.once(ctx, method, path, body, out)
		var e *Error
		if !errors.As(err, &e) || !e.retryable(idempotent) || limit < 0 {
			return err
		}
		wait := min(max(e.RetryAfter, 100*time.Millisecond), 5*time.Second)
		if e.Code == "contention" {
			// Retry-After is whole seconds; contention clears in
			// milliseconds (another writer's commit was folded).
			wait = 50*time.Millisecond + time.Duration(mrand.Int64N(int64(100*time.Millisecond)))
		}
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
	}
}

// retryable: a 503 the server says may be retried.
func (e *Error) retryable(idempotent bool) bool {
	if e.Status != http.StatusServiceUnavailable {
		return false
	}
	switch e.Code {
	case "contention":
		return true
	case "unavailable":
		return e.Recorded != "unknown" || idempotent
	}
	return false
}

func (c *Client) once(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(b, e) != nil {
			e.Code, e.Detail = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(b))
		}
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
