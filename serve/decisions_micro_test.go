package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// decisions.list reads from_seq and limit by GET /v1/decisions's rules
// for its query, so the two answer alike: {"limit":0} is ?limit=0, a 400
// (an absent limit is the default page), and {"from_seq":-1} is
// ?from_seq=-1, not a stream sequence; a value that is not a number is
// the micro request's own 400 invalid_json.
func TestMicro_DecisionsListValidatesAsHTTP(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	for _, c := range []struct {
		query, body string // query "" = micro only
		status      int
		want        serve.ErrorBody
	}{
		{"limit=0", `{"limit":0}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit "0" is not a positive number`}},
		{"limit=-1", `{"limit":-1}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit "-1" is not a positive number`}},
		{"limit=1.5", `{"limit":1.5}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit "1.5" is not a positive number`}},
		{"limit=5001", `{"limit":5001}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `limit must be in 1..5000`}},
		{"from_seq=-1", `{"from_seq":-1}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `from_seq "-1" is not a stream sequence`}},
		{"from_seq=1e3", `{"from_seq":1e3}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `from_seq "1e3" is not a stream sequence`}},
		{"from_seq=9007199254740993", `{"from_seq":9007199254740993}`, 400, serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: `from_seq must be at most 9007199254740991 (2^53 − 1)`}},
		{"", `{"from_seq":"5"}`, 400, serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `from_seq: expected an integer, got string`}},
		{"", `{"limit":true}`, 400, serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `limit: expected an integer, got boolean`}},
		{"", `{"limit":[1]}`, 400, serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `limit: expected an integer, got array`}},
		{"", `{"agent":5}`, 400, serve.ErrorBody{Error: serve.CodeInvalidJSON, Detail: `agent: expected a string, got number`}},
	} {
		if c.query != "" {
			status, b := do(t, "GET", srv.url+"/v1/decisions?"+c.query, "")
			if got := errorBody(t, b); status != c.status || got != c.want {
				t.Errorf("?%s: HTTP %d %s, want %d %+v", c.query, status, b, c.status, c.want)
			}
		}
		if code, eb := microAnswer(t, nc, "decisions.list", c.body); code != "400" || eb != c.want {
			t.Errorf("%s: micro %s %+v, want 400 %+v", c.body, code, eb, c.want)
		}
	}
	// What both take: a positive limit, from_seq 0 (the start), null as
	// absent.
	for _, c := range []struct{ query, body string }{
		{"limit=1&from_seq=0", `{"limit":1,"from_seq":0}`},
		{"", `{"limit":null,"from_seq":null}`},
	} {
		if c.query != "" {
			if status, b := do(t, "GET", srv.url+"/v1/decisions?"+c.query, ""); status != 200 {
				t.Errorf("?%s: HTTP %d %s, want 200", c.query, status, b)
			}
		}
		var page serve.DecisionsView
		if m := microCall(t, nc, "decisions.list", json.RawMessage(c.body), &page); m.Header.Get("Nats-Service-Error-Code") != "" || page.Decisions == nil {
			t.Errorf("%s: micro %v %s, want a page", c.body, m.Header, m.Data)
		}
	}
}
