package serve_test

import (
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// A turn op's 404 names the agents it searched, and, when the request
// named an agent that lacks the turn while another served agent has it,
// says which: over HTTP and the micro service alike, as the explanation
// route does.
func TestHTTP_UnknownTurnNamesTheAgents(t *testing.T) {
	srv, _, mc := strictServer(t)
	if status, b := do(t, "POST", srv.url+"/v1/turns", `{"agent":"coder","session":"s","turn_id":"c2"}`); status != 200 {
		t.Fatalf("begin c2 in coder: %d %s", status, b)
	}
	const inCoder = `agent main has no turn "c2" (agent coder has it)`
	for _, c := range []struct {
		name, method, path, body string
		micro, microBody         string
		detail                   string
	}{
		{"outcome naming main", "POST", "/v1/turns/c2/outcomes", `{"agent":"main","attempt":1,"ok":true}`,
			"turns.outcome", `{"turn_id":"c2","agent":"main","attempt":1,"ok":true}`, inCoder},
		{"resume naming main", "POST", "/v1/turns/c2/resume", `{"agent":"main"}`,
			"turns.resume", `{"turn_id":"c2","agent":"main"}`, inCoder},
		{"read naming main", "GET", "/v1/turns/c2?agent=main", "",
			"turns.get", `{"turn_id":"c2","agent":"main"}`, inCoder},
		{"explanation naming main", "GET", "/v1/turns/c2/explanation?agent=main", "", "", "", inCoder},
		{"explanation of the default agent", "GET", "/v1/turns/c2/explanation", "", "", "", inCoder},
		{"outcome naming coder, no such turn", "POST", "/v1/turns/nope/outcomes", `{"agent":"coder","attempt":1,"ok":true}`,
			"turns.outcome", `{"turn_id":"nope","agent":"coder","attempt":1,"ok":true}`, `agent coder has no turn "nope"`},
		{"outcome naming no agent", "POST", "/v1/turns/nope/outcomes", `{"attempt":1,"ok":true}`,
			"turns.outcome", `{"turn_id":"nope","attempt":1,"ok":true}`, `no served agent has turn "nope" (served: main, coder)`},
		{"read naming no agent", "GET", "/v1/turns/nope", "",
			"turns.get", `{"turn_id":"nope"}`, `no served agent has turn "nope" (served: main, coder)`},
	} {
		want := serve.ErrorBody{Error: serve.CodeUnknownTurn, Detail: c.detail}
		status, b := do(t, c.method, srv.url+c.path, c.body)
		if got := errorBody(t, b); status != 404 || got != want {
			t.Errorf("%s: HTTP %d %s\nwant 404 %+v", c.name, status, b, want)
		}
		if c.micro == "" {
			continue
		}
		if code, eb := microAnswer(t, mc, c.micro, c.microBody); code != "404" || eb != want {
			t.Errorf("%s: micro %s %+v\nwant 404 %+v", c.name, code, eb, want)
		}
	}
}

// With one agent served, the 404 names it, as the explanation route does.
func TestHTTP_UnknownTurnOneAgent(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	want := serve.ErrorBody{Error: serve.CodeUnknownTurn, Detail: `agent main has no turn "nope"`}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/turns/nope/outcomes", `{"attempt":1,"ok":true}`},
		{"POST", "/v1/turns/nope/outcomes", `{"agent":"main","attempt":1,"ok":true}`},
		{"GET", "/v1/turns/nope", ""},
		{"GET", "/v1/turns/nope/explanation", ""},
	} {
		status, b := do(t, c.method, srv.url+c.path, c.body)
		if got := errorBody(t, b); status != 404 || got != want {
			t.Errorf("%s %s %s: %d %s, want 404 %+v", c.method, c.path, c.body, status, b, want)
		}
	}
}

// On a stream continuing an archived one (created with --first-seq), the
// 404 of a turn it does not hold says older turns are in the archive.
func TestHTTP_UnknownTurnOnAStreamContinuingAnArchive(t *testing.T) {
	st := testutil.Store(t, events.WithFirstSeq(500))
	srv := startServer(t, st, serve.Config{Config: loadConfig(t)})
	want := serve.ErrorBody{Error: serve.CodeUnknownTurn, Detail: `agent main has no turn "old"; this stream starts at sequence 500, continuing an archived one: what came before is in the archive (mount it: docs/operations.md, "Mount an archive")`}
	for _, path := range []string{"/v1/turns/old", "/v1/turns/old/explanation"} {
		status, b := do(t, "GET", srv.url+path, "")
		if got := errorBody(t, b); status != 404 || got != want {
			t.Errorf("GET %s: %d %s, want 404 %+v", path, status, b, want)
		}
	}
}
