package serve_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

func microCall(t *testing.T, nc *nats.Conn, ep string, req, out any) *nats.Msg {
	t.Helper()
	b, _ := json.Marshal(req)
	m, err := nc.Request(serve.MicroPrefix+"."+ep, b, 5*time.Second)
	testutil.NoError(t, err)
	if out != nil && m.Header.Get("Nats-Service-Error-Code") == "" {
		testutil.NoError(t, json.Unmarshal(m.Data, out))
	}
	return m
}

// The micro service "fledger" answers the same operations: begin, an
// outcome, a read, and an error with its status code.
func TestMicro_BeginOutcomeRead(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) {
		c.EngineOptions = append(c.EngineOptions, engine.WithConflictRetries(8))
	})
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)

	var begun serve.TurnStep
	microCall(t, nc, "turns.begin", serve.BeginRequest{Session: "s1"}, &begun)
	if begun.Next.Action != "call" || begun.Next.Attempt != 1 {
		t.Fatalf("begin %+v", begun)
	}
	var done serve.TurnStep
	microCall(t, nc, "turns.outcome", map[string]any{"turn_id": begun.TurnID, "attempt": 1, "ok": true}, &done)
	if done.Next.Action != "done" || done.Next.AnsweredBy != "anthropic/claude-opus-4-6" {
		t.Fatalf("outcome %+v", done)
	}
	var profs serve.ProfilesView
	microCall(t, nc, "profiles.list", serve.ProfilesRequest{}, &profs)
	if len(profs.Profiles) != 3 || profs.Profiles[0].LastUsed == 0 {
		t.Fatalf("profiles %+v", profs)
	}
	m := microCall(t, nc, "turns.outcome", map[string]any{"turn_id": "nope", "attempt": 1, "ok": true}, nil)
	var eb serve.ErrorBody
	_ = json.Unmarshal(m.Data, &eb)
	if m.Header.Get("Nats-Service-Error-Code") != "404" || eb.Error != serve.CodeUnknownTurn {
		t.Fatalf("unknown turn over micro: %v %s", m.Header, m.Data)
	}
	m = microCall(t, nc, "turns.begin", map[string]any{"session": "s1", "bogus": 1}, nil)
	if m.Header.Get("Nats-Service-Error-Code") != "400" {
		t.Fatalf("unknown field over micro: %v %s", m.Header, m.Data)
	}
}

// The micro service honours the HTTP token: without it (or with a wrong
// one) every operation but health is 401 unauthorized; "Authorization:
// Bearer <token>" (any case of the scheme) as a message header passes.
func TestMicro_Token(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0), func(c *serve.Config) { c.Token = "s3cret" })
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	call := func(ep, auth string) *nats.Msg {
		m := nats.NewMsg(serve.MicroPrefix + "." + ep)
		m.Data = []byte(`{"session":"s1"}`)
		if ep == "health" || ep == "profiles.list" {
			m.Data = nil
		}
		if auth != "" {
			m.Header.Set("Authorization", auth)
		}
		r, err := nc.RequestMsg(m, 5*time.Second)
		testutil.NoError(t, err)
		return r
	}
	for _, auth := range []string{"", "Bearer nope", "s3cret", "Basic s3cret"} {
		for _, ep := range []string{"turns.begin", "profiles.list"} {
			r := call(ep, auth)
			var eb serve.ErrorBody
			_ = json.Unmarshal(r.Data, &eb)
			if r.Header.Get("Nats-Service-Error-Code") != "401" || eb.Error != serve.CodeUnauthorized {
				t.Fatalf("%s with %q: %v %s, want 401 unauthorized", ep, auth, r.Header, r.Data)
			}
		}
	}
	if r := call("health", ""); r.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("health without a token: %v %s", r.Header, r.Data)
	}
	for _, auth := range []string{"Bearer s3cret", "bearer  s3cret"} {
		r := call("turns.begin", auth)
		var begun serve.TurnStep
		if r.Header.Get("Nats-Service-Error-Code") != "" || json.Unmarshal(r.Data, &begun) != nil || begun.Next.Action != "call" {
			t.Fatalf("begin with %q: %v %s", auth, r.Header, r.Data)
		}
	}
}

// decisions.list takes GET /v1/decisions's request as JSON: the default
// agent's records without agent, from_seq, since as RFC 3339 text, and
// the same refusals.
func TestMicro_DecisionsList(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	var page serve.DecisionsView
	if m := microCall(t, nc, "decisions.list", map[string]any{"from_seq": 1, "since": testutil.T0.Format(time.RFC3339), "limit": 10}, &page); m.Header.Get("Nats-Service-Error-Code") != "" {
		t.Fatalf("decisions.list: %v %s", m.Header, m.Data)
	}
	if len(page.Decisions) != 0 || page.NextFromSeq != page.Checkpoint+1 {
		t.Errorf("page %+v", page)
	}
	cases := []struct {
		req    map[string]any
		status string
		body   serve.ErrorBody
	}{
		{map[string]any{"agent": "nope"}, "404", serve.ErrorBody{Error: serve.CodeUnknownAgent, Detail: `agent "nope" is not served here (served: main)`}},
		{map[string]any{"since": 5}, "400", serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `since: expected an RFC 3339 time (a string), got number; a stream sequence goes in from_seq`}},
		{map[string]any{"since": "5"}, "400", serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `since "5" is a number: since is an RFC 3339 time (e.g. 2026-01-02T15:04:05Z); a stream sequence goes in from_seq`}},
		{map[string]any{"since_seq": 5}, "400", serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `unknown field "since_seq"`}},
	}
	for _, tc := range cases {
		m := microCall(t, nc, "decisions.list", tc.req, nil)
		var eb serve.ErrorBody
		_ = json.Unmarshal(m.Data, &eb)
		if m.Header.Get("Nats-Service-Error-Code") != tc.status || eb != tc.body {
			t.Errorf("decisions.list %v: %s %+v, want %s %+v", tc.req, m.Header.Get("Nats-Service-Error-Code"), eb, tc.status, tc.body)
		}
	}
}
