package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// With several agents served, a turn op without ?agent= finds its turn by
// id, so ids are unique across them: a begin with an id another served
// agent has is 409 turn_exists, and an id two agents got anyway (begun on
// instances serving one agent each) is 409 ambiguous_turn until the agent
// is named.
func TestHTTP_TurnIDsAcrossServedAgents(t *testing.T) {
	st := testutil.Store(t)
	cfg := func(agents ...string) serve.Config {
		return serve.Config{Agents: agents, Config: loadConfig(t),
			EngineOptions: []engine.Option{engine.WithClock(testutil.NewManualClock(testutil.T0)), engine.WithSeeds(func(string) uint64 { return 42 })}}
	}
	both := startServer(t, st, cfg("main", "coder"))
	agentOf := func(b []byte) string {
		var s struct{ Agent string }
		testutil.NoError(t, json.Unmarshal(b, &s))
		return s.Agent
	}

	status, b := do(t, "POST", both.url+"/v1/turns", `{"agent":"coder","session":"s","turn_id":"ct1"}`)
	if status != 200 {
		t.Fatalf("begin coder ct1: %d %s", status, b)
	}
	before := testutil.LastSeq(t, st)
	status, b = do(t, "POST", both.url+"/v1/turns", `{"agent":"main","session":"s","turn_id":"ct1","model":"openai/gpt-5"}`)
	if eb := errorBody(t, b); status != 409 || eb.Error != serve.CodeTurnExists || eb.Detail != `turn "ct1" exists in agent "coder": turn ids are unique across the agents served here` {
		t.Fatalf("begin main ct1: %d %s, want 409 turn_exists naming coder", status, b)
	}
	// Refused: not even its model selection is recorded.
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("the refused begin appended (last seq %d → %d)", before, now)
	}
	if status, b = do(t, "GET", both.url+"/v1/turns/ct1", ""); status != 200 || agentOf(b) != "coder" {
		t.Fatalf("GET ct1: %d %s, want coder's turn", status, b)
	}

	// One instance per agent does not see the other agent's ids.
	mainOnly, coderOnly := startServer(t, st, cfg("main")), startServer(t, st, cfg("coder"))
	for _, s := range []*server{mainOnly, coderOnly} {
		if status, b := do(t, "POST", s.url+"/v1/turns", `{"session":"s","turn_id":"ct2"}`); status != 200 {
			t.Fatalf("begin ct2: %d %s", status, b)
		}
	}
	status, b = do(t, "GET", both.url+"/v1/turns/ct2", "")
	if eb := errorBody(t, b); status != 409 || eb.Error != serve.CodeAmbiguousTurn || eb.Detail != `turn "ct2" exists in several served agents (main, coder): name one (the request's agent field; ?agent= on GET)` {
		t.Fatalf("GET ct2: %d %s, want 409 ambiguous_turn", status, b)
	}
	if status, b = do(t, "GET", both.url+"/v1/turns/ct2?agent=coder", ""); status != 200 || agentOf(b) != "coder" {
		t.Fatalf("GET ct2?agent=coder: %d %s", status, b)
	}
	if status, b = do(t, "POST", both.url+"/v1/turns/ct2/resume", `{"agent":"coder"}`); status == 409 {
		t.Fatalf("resume ct2 naming coder in the body: %d %s", status, b)
	}
}
