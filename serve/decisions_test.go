package serve_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// threeModelConfig has two anthropic models before the openai one, so a
// begin after anthropic's auth failures skips both anthropic candidates in
// one commit (two decision records of one stream sequence).
const threeModelConfig = `
auth:
  profiles:
    "anthropic:a": {provider: anthropic, type: api_key}
    "openai:a": {provider: openai, type: api_key}
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [anthropic/claude-sonnet-4-5, openai/gpt-5]
`

// decisionRow is what the decisions tests compare of a record.
type decisionRow struct {
	Seq      uint64 `json:"seq"`
	Idx      int    `json:"idx"`
	Agent    string `json:"agent"`
	TurnID   string `json:"turnId"`
	Decision string `json:"decision"`
}

type decisionsPage struct {
	Decisions   []decisionRow `json:"decisions"`
	NextFromSeq uint64        `json:"next_from_seq"`
	Checkpoint  uint64        `json:"checkpoint"`
}

// decisionsServer serves agents main (the default) and coder, with
// decision records of both: main's turn m1 at T0, coder's c1 at T0, main's
// m2 a minute later.
func decisionsServer(t *testing.T) *server {
	t.Helper()
	l, err := config.Parse([]byte(threeModelConfig), "test")
	testutil.NoError(t, err)
	clock := testutil.NewManualClock(testutil.T0)
	srv := startServer(t, testutil.Store(t), serve.Config{Agents: []string{"main", "coder"}, Config: l,
		EngineOptions: []engine.Option{engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 })}})
	fail := `{"attempt":1,"error":{"status":401,"message":"invalid x-api-key"}}`
	for _, turn := range []struct{ agent, id string }{{"main", "m1"}, {"coder", "c1"}, {"main", "m2"}} {
		if turn.id == "m2" {
			clock.Advance(time.Minute)
		}
		if status, b := do(t, "POST", srv.url+"/v1/turns", fmt.Sprintf(`{"agent":%q,"session":"s","turn_id":%q}`, turn.agent, turn.id)); status != 200 {
			t.Fatalf("begin %s: %d %s", turn.id, status, b)
		}
		if status, b := do(t, "POST", srv.url+"/v1/turns/"+turn.id+"/outcomes", fail); status != 200 {
			t.Fatalf("report %s: %d %s", turn.id, status, b)
		}
	}
	return srv
}

func getDecisions(t *testing.T, srv *server, query string) decisionsPage {
	t.Helper()
	status, b := do(t, "GET", srv.url+"/v1/decisions"+query, "")
	if status != 200 {
		t.Fatalf("GET /v1/decisions%s: %d %s", query, status, b)
	}
	var p decisionsPage
	testutil.NoError(t, json.Unmarshal(b, &p))
	return p
}

var (
	m1 = []decisionRow{{4, 2, "main", "m1", "candidate_failed"}, {4, 4, "main", "m1", "skip_candidate"}}
	c1 = []decisionRow{{6, 2, "coder", "c1", "candidate_failed"}, {6, 4, "coder", "c1", "skip_candidate"}}
	m2 = []decisionRow{{8, 2, "main", "m2", "candidate_failed"}, {8, 4, "main", "m2", "skip_candidate"}}
)

// GET /v1/decisions reads one agent's records: the server's default agent
// without agent; from_seq is an inclusive stream sequence, since an RFC
// 3339 time; next_from_seq reads on; a page holds whole commits only.
func TestHTTP_DecisionsQuery(t *testing.T) {
	srv := decisionsServer(t)
	cat := func(pages ...[]decisionRow) []decisionRow {
		var out []decisionRow
		for _, p := range pages {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		query string
		want  decisionsPage
	}{
		{"", decisionsPage{cat(m1, m2), 9, 8}},
		{"?agent=main", decisionsPage{cat(m1, m2), 9, 8}},
		{"?agent=coder", decisionsPage{c1, 9, 8}},
		{"?from_seq=4", decisionsPage{cat(m1, m2), 9, 8}},
		{"?from_seq=5", decisionsPage{m2, 9, 8}},
		{"?from_seq=9", decisionsPage{[]decisionRow{}, 9, 8}},
		{"?from_seq=20", decisionsPage{[]decisionRow{}, 20, 8}},
		{"?since=" + testutil.T0.Add(30*time.Second).Format(time.RFC3339), decisionsPage{m2, 9, 8}},
		{"?since=" + testutil.T0.Format(time.RFC3339Nano), decisionsPage{cat(m1, m2), 9, 8}},
		// A page of whole commits: two records are more than limit 1, and
		// the first commit is answered whole.
		{"?limit=1", decisionsPage{m1, 8, 8}},
		{"?limit=3", decisionsPage{m1, 8, 8}},
		{"?limit=4", decisionsPage{cat(m1, m2), 9, 8}},
		{"?from_seq=8&limit=1", decisionsPage{m2, 9, 8}},
	}
	for _, tc := range cases {
		if got := getDecisions(t, srv, tc.query); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET /v1/decisions%s\n got %+v\nwant %+v", tc.query, got, tc.want)
		}
	}
}

// The query refusals of GET /v1/decisions, each naming what to send.
func TestHTTP_DecisionsQueryRefused(t *testing.T) {
	srv := decisionsServer(t)
	cases := []struct {
		query  string
		status int
		body   serve.ErrorBody
	}{
		{"?agent=nope", 404, serve.ErrorBody{Error: serve.CodeUnknownAgent, Detail: `agent "nope" is not served here (served: main, coder)`}},
		{"?since=5", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `since "5" is a number: since is an RFC 3339 time (e.g. 2026-01-02T15:04:05Z); a stream sequence goes in from_seq`}},
		{"?since=yesterday", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `since "yesterday" is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)`}},
		{"?from_seq=-1", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `from_seq "-1" is not a stream sequence`}},
		{"?limit=0", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit "0" is not a positive number`}},
		{"?limit=5001", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit must be in 1..5000`}},
		{"?since_seq=4", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `unknown query parameter "since_seq": GET /v1/decisions takes only agent, from_seq, since, limit, until, provider, reason, outcome, each at most once`}},
		{"?limit=1&limit=2", 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `query parameter "limit" is given 2 times: GET /v1/decisions takes only agent, from_seq, since, limit, until, provider, reason, outcome, each at most once`}},
	}
	for _, tc := range cases {
		status, b := do(t, "GET", srv.url+"/v1/decisions"+tc.query, "")
		if got := errorBody(t, b); status != tc.status || got != tc.body {
			t.Errorf("GET /v1/decisions%s: %d %+v\nwant %d %+v", tc.query, status, got, tc.status, tc.body)
		}
	}
}

// Reading page after page with next_from_seq returns every record once,
// each page whole commits.
func TestHTTP_DecisionsPagesReadOn(t *testing.T) {
	srv := decisionsServer(t)
	var all []decisionRow
	from := uint64(0)
	for range 10 {
		p := getDecisions(t, srv, fmt.Sprintf("?limit=1&from_seq=%d", from))
		if len(p.Decisions) == 0 {
			break
		}
		for _, d := range p.Decisions {
			if d.Seq != p.Decisions[0].Seq {
				t.Fatalf("a page of limit 1 holds two commits: %+v", p.Decisions)
			}
		}
		all = append(all, p.Decisions...)
		from = p.NextFromSeq
	}
	if want := append(append([]decisionRow{}, m1...), m2...); !reflect.DeepEqual(all, want) || from != 9 {
		t.Errorf("read %+v up to %d, want %+v up to 9", all, from, want)
	}
}
