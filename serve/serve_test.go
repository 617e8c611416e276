package serve_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

func rateLimited() *client.ProviderError {
	return &client.ProviderError{Status: 429, Code: "rate_limit_error", Type: "rate_limit_error",
		Message: `Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`}
}

func authFailed() *client.ProviderError {
	return &client.ProviderError{Status: 401, Code: "authentication_error",
		Message: `Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`}
}

// The step protocol over HTTP: an auth failure rotates to the second
// profile, which answers; a repeated report returns the same next and
// appends nothing.
func TestHTTP_TurnRotatesAndRepeatIsIdempotent(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, st := defaultServer(t, clock)
	ctx := testutil.Context(t)
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Agent: "main", Session: "s1"})
	testutil.NoError(t, err)
	n := step.Next
	if n.Action != "call" || n.Provider != "anthropic" || n.Profile != "anthropic:a" || n.Attempt != 1 {
		t.Fatalf("first next %+v", n)
	}
	step, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 1, Error: authFailed()})
	testutil.NoError(t, err)
	if step.Next.Action != "call" || step.Next.Profile != "anthropic:b" || step.Next.Kind != "rotation" || step.Next.Attempt != 2 {
		t.Fatalf("after auth failure %+v", step.Next)
	}
	last, _ := st.LastSeq(ctx, "")
	again, err := srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 1, Error: authFailed()})
	testutil.NoError(t, err)
	if now, _ := st.LastSeq(ctx, ""); now != last {
		t.Fatalf("repeat appended (%d → %d)", last, now)
	}
	if !again.Replayed || !reflect.DeepEqual(again.Next, step.Next) {
		t.Fatalf("repeat\n got %+v\nwant %+v", again.Next, step.Next)
	}
	done, err := srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 2, OK: true, LatencyMs: 12})
	testutil.NoError(t, err)
	if done.Next.Action != "done" || done.Next.AnsweredBy != "anthropic/claude-opus-4-6" || done.Next.Profile != "anthropic:b" {
		t.Fatalf("done %+v", done.Next)
	}
	again, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 2, OK: true, LatencyMs: 12})
	testutil.NoError(t, err)
	if !reflect.DeepEqual(again.Next, done.Next) {
		t.Fatalf("repeat done\n got %+v\nwant %+v", again.Next, done.Next)
	}
	var tv serve.TurnView
	testutil.NoError(t, srv.cl.Turn(ctx, step.TurnID, &tv))
	if tv.Phase != "succeeded" || tv.Attempts != 2 || tv.Next.Action != "done" {
		t.Fatalf("turn view %+v", tv)
	}
	profs, err := srv.cl.Profiles(ctx, "")
	testutil.NoError(t, err)
	if len(profs) != 3 || profs[0].ID != "anthropic:a" || profs[0].ErrorCount != 1 || profs[0].DisabledReason != "" && profs[0].CooldownUntil == 0 {
		t.Fatalf("profiles %+v", profs)
	}
	var sess serve.SessionView
	testutil.NoError(t, srv.cl.Session(ctx, "main", "s1", &sess))
	if sess.Pin != "anthropic:b" || sess.PinSource != "auto" {
		t.Fatalf("session %+v", sess)
	}
	var dec serve.DecisionsView
	testutil.NoError(t, srv.cl.Decisions(ctx, client.DecisionsQuery{}, &dec))
	if dec.Checkpoint == 0 {
		t.Fatalf("decisions %+v", dec)
	}
}

// A rate limit is retried on the same profile after a wait: resuming
// early is refused with 425 and the remaining ms; after the wait it
// returns the retry's call.
func TestHTTP_WaitThenResume(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, _ := defaultServer(t, clock, func(c *serve.Config) { c.ResumeGrace = -1 })
	ctx := testutil.Context(t)
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s1"})
	testutil.NoError(t, err)
	step, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 1, Error: rateLimited()})
	testutil.NoError(t, err)
	if step.Next.Action != "wait" || step.Next.Ms <= 0 || step.Next.ResumeAt == 0 {
		t.Fatalf("wait %+v", step.Next)
	}
	_, err = srv.cl.Resume(ctx, step.TurnID)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusTooEarly || ce.Code != serve.CodeWaitNotOver {
		t.Fatalf("early resume: %v", err)
	}
	_ = clock.Sleep(ctx, time.Duration(step.Next.Ms)*time.Millisecond)
	step, err = srv.cl.Resume(ctx, step.TurnID)
	testutil.NoError(t, err)
	if step.Next.Action != "call" || step.Next.Kind != "retry" || step.Next.Attempt != 2 || step.Next.Profile != "anthropic:a" {
		t.Fatalf("after the wait %+v", step.Next)
	}
}

// Bad input: each gets a clear 4xx with {error, detail} and changes
// nothing on the stream.
func TestHTTP_BadInputChangesNothing(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, st := defaultServer(t, clock, func(c *serve.Config) { c.MaxBodyBytes = 4096 })
	ctx := testutil.Context(t)
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	_ = step
	last, _ := st.LastSeq(ctx, "")
	big := `{"attempt":1,"error":{"status":500,"message":"` + strings.Repeat("x", 5000) + `"}}`
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"malformed JSON", "POST", "/v1/turns", `{"session": "s1",`, 400, serve.CodeInvalidJSON},
		{"unknown field", "POST", "/v1/turns", `{"session":"s1","sesion":"x"}`, 400, serve.CodeInvalidJSON},
		{"wrong type", "POST", "/v1/turns/t1/outcomes", `{"attempt":"one","ok":true}`, 400, serve.CodeInvalidJSON},
		{"two values", "POST", "/v1/turns", `{"session":"s1"} {}`, 400, serve.CodeInvalidJSON},
		{"empty body", "POST", "/v1/turns", ``, 400, serve.CodeInvalidJSON},
		{"missing session", "POST", "/v1/turns", `{"agent":"main"}`, 400, serve.CodeInvalidRequest},
		{"bad chat", "POST", "/v1/turns", `{"session":"s1","chat":"dm"}`, 400, serve.CodeInvalidRequest},
		{"unknown agent", "POST", "/v1/turns", `{"session":"s1","agent":"other"}`, 404, serve.CodeUnknownAgent},
		{"unknown turn", "POST", "/v1/turns/nope/outcomes", `{"attempt":1,"ok":true}`, 404, serve.CodeUnknownTurn},
		{"unknown turn read", "GET", "/v1/turns/nope", ``, 404, serve.CodeUnknownTurn},
		{"attempt never planned", "POST", "/v1/turns/t1/outcomes", `{"attempt":7,"ok":true}`, 409, serve.CodeAttemptNotPlanned},
		{"attempt zero", "POST", "/v1/turns/t1/outcomes", `{"attempt":0,"ok":true}`, 400, serve.CodeInvalidRequest},
		{"ok and error", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"ok":true,"error":{"status":500}}`, 400, serve.CodeInvalidRequest},
		{"neither ok nor error", "POST", "/v1/turns/t1/outcomes", `{"attempt":1}`, 400, serve.CodeInvalidRequest},
		{"oversize body", "POST", "/v1/turns/t1/outcomes", big, 413, serve.CodeBodyTooLarge},
		{"path and body disagree", "POST", "/v1/turns/t1/outcomes", `{"turn_id":"t2","attempt":1,"ok":true}`, 400, serve.CodeInvalidRequest},
		{"bad model", "POST", "/v1/sessions/main/s1/model", `{"model":"gpt-5"}`, 400, serve.CodeInvalidRequest},
		{"unknown profile pin", "POST", "/v1/sessions/main/s1/pin", `{"profile":"nope:x"}`, 422, serve.CodeUnknownProfile},
		{"bad reset kind", "POST", "/v1/sessions/main/s1/reset", `{"kind":"wipe"}`, 400, serve.CodeInvalidRequest},
		{"bad since", "GET", "/v1/decisions?since=-1", ``, 400, serve.CodeInvalidRequest},
		{"unknown route", "GET", "/v1/nope", ``, 404, serve.CodeNotFound},
		{"wrong method", "DELETE", "/v1/turns", ``, 405, serve.CodeMethodNotAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, c.method, srv.url+c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			testutil.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var eb serve.ErrorBody
			if err := json.Unmarshal(b, &eb); err != nil || resp.StatusCode != c.status || eb.Error != c.code || eb.Detail == "" {
				t.Fatalf("status %d body %s, want %d %s", resp.StatusCode, b, c.status, c.code)
			}
			if strings.Contains(string(b), "goroutine") || strings.Contains(string(b), ".go:") {
				t.Fatalf("stack trace in %s", b)
			}
		})
	}
	if now, _ := st.LastSeq(ctx, ""); now != last {
		t.Fatalf("bad input appended (%d → %d)", last, now)
	}
}

func TestHTTP_Token(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, st := defaultServer(t, clock, func(c *serve.Config) { c.Token = "s3cret" })
	ctx := testutil.Context(t)
	last, _ := st.LastSeq(ctx, "")
	for _, tok := range []string{"", "wrong", "s3cret-but-longer"} {
		bad := client.New(srv.url, tok)
		_, err := bad.Begin(ctx, client.BeginRequest{Session: "s1"})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 401 || ce.Code != serve.CodeUnauthorized {
			t.Fatalf("token %q: %v", tok, err)
		}
	}
	if now, _ := st.LastSeq(ctx, ""); now != last {
		t.Fatalf("unauthorised requests appended")
	}
	if _, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s1"}); err != nil {
		t.Fatalf("right token: %v", err)
	}
	resp, err := http.Get(srv.url + "/healthz")
	testutil.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz without token: %d", resp.StatusCode)
	}
}

// Without --config and without a ConfigApplied in the stream, turns are
// refused with a clear error.
func TestHTTP_NoConfigRefusesTurns(t *testing.T) {
	st := testutil.Store(t)
	srv := startServer(t, st, serve.Config{})
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 503 || ce.Code != serve.CodeNoConfig || !strings.Contains(ce.Detail, "--config") {
		t.Fatalf("no config: %v", err)
	}
}

func TestHTTP_HealthAndMetrics(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	resp, err := http.Get(srv.url + "/healthz")
	testutil.NoError(t, err)
	var h serve.Health
	testutil.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	if h.Status != "ok" || h.LastSeq == 0 {
		t.Fatalf("health %+v", h)
	}
	resp, err = http.Get(srv.url + "/metrics")
	testutil.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("fledger_serve_requests_total")) || !bytes.Contains(b, []byte("fledger_engine_commits_total")) {
		t.Fatalf("metrics:\n%.500s", b)
	}
}
