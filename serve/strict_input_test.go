package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// strictServer serves the agents main and coder, with the micro service
// started; it returns the server, its store and a micro client connection.
func strictServer(t *testing.T) (*server, events.Store, *nats.Conn) {
	t.Helper()
	st := testutil.Store(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	srv := startServer(t, st, serve.Config{Agents: []string{"main", "coder"}, Config: loadConfig(t),
		EngineOptions: []engine.Option{engine.WithClock(testutil.NewManualClock(testutil.T0)), engine.WithSeeds(func(string) uint64 { return 42 })}})
	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	return srv, st, natstest.DialWriter(t, st)
}

// Input a generated or hand-written client might send by mistake, which
// encoding/json and url.Values would read leniently (the last duplicate
// key wins, keys match without case, an unparsable query pair is dropped,
// a POST's query and a GET's body are ignored), is refused with 400 before
// anything is recorded — over HTTP, and through the same decoder over the
// micro service.
func TestHTTP_StrictInputRefused(t *testing.T) {
	srv, st, mc := strictServer(t)
	begun := func(id string) {
		if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s","turn_id":"`+id+`"}`); status != 200 {
			t.Fatalf("begin %s: %d %s", id, status, b)
		}
	}
	begun("t1")
	long := strings.Repeat("k", 600)
	cases := []struct {
		name, method, path, body string
		micro                    string // the micro endpoint sent the same body ("" = none)
		code, detail             string
	}{
		// Duplicate keys, at any depth.
		{"duplicate session", "POST", "/v1/turns", `{"session":"dupA","session":"dupB"}`, "turns.begin",
			serve.CodeInvalidJSON, `key "session" is given twice (at /session); a key may appear once in an object`},
		{"duplicate agent", "POST", "/v1/turns", `{"session":"d","agent":"main","agent":"coder"}`, "turns.begin",
			serve.CodeInvalidJSON, `key "agent" is given twice (at /agent); a key may appear once in an object`},
		{"duplicate ok", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"ok":false,"ok":true}`, "",
			serve.CodeInvalidJSON, `key "ok" is given twice (at /ok); a key may appear once in an object`},
		{"duplicate in the provider error", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":429,"status":500}}`, "",
			serve.CodeInvalidJSON, `key "status" is given twice (at /error/status); a key may appear once in an object`},
		{"provider error keys match without case", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":429,"Status":500}}`, "",
			serve.CodeInvalidJSON, `key "Status" is given twice (at /error/Status); a key may appear once in an object`},
		{"duplicate header", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":429,"headers":{"retry-after":"1","retry-after":"9"}}}`, "",
			serve.CodeInvalidJSON, `key "retry-after" is given twice (at /error/headers/retry-after); a key may appear once in an object`},
		{"duplicate in a cause", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"cause":{"code":"a","code":"b"}}}`, "",
			serve.CodeInvalidJSON, `key "code" is given twice (at /error/cause/code); a key may appear once in an object`},
		{"pointer escapes", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"headers":{"a/b~c":"1","a/b~c":"2"}}}`, "",
			serve.CodeInvalidJSON, `key "a/b~c" is given twice (at /error/headers/a~1b~0c); a key may appear once in an object`},
		// Nesting deeper than encoding/json's 10 000 levels, anywhere.
		{"deep nesting", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"body":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, "turns.outcome",
			serve.CodeInvalidJSON, `malformed JSON at byte 10028: invalid character '[' exceeded max depth`},
		// Keys that name a field only without case.
		{"upper-case key", "POST", "/v1/turns", `{"SESSION":"upper-only"}`, "turns.begin",
			serve.CodeInvalidJSON, `key "SESSION" (at /SESSION) is not a field; keys are case-sensitive: the field is "session"`},
		{"capitalised key", "POST", "/v1/sessions/main/s/model", `{"Model":"openai/gpt-5"}`, "sessions.model",
			serve.CodeInvalidJSON, `key "Model" (at /Model) is not a field; keys are case-sensitive: the field is "model"`},
		// A body that is not an object.
		{"null body", "POST", "/v1/turns", `null`, "turns.begin", serve.CodeInvalidJSON, `body must be a JSON object, got null`},
		{"null optional body", "POST", "/v1/sessions/main/s/reset", ` null `, "sessions.reset", serve.CodeInvalidJSON, `body must be a JSON object, got null`},
		{"array body", "POST", "/v1/turns", `[]`, "turns.begin", serve.CodeInvalidJSON, `body must be a JSON object, got array`},
		{"scalar body", "POST", "/v1/turns", `7`, "turns.begin", serve.CodeInvalidJSON, `body must be a JSON object, got number`},
		// Query pairs Go cannot parse.
		{"semicolon", "GET", "/v1/profiles?agent=coder;x=1", "", "",
			serve.CodeInvalidRequest, `query pair "agent=coder;x=1" has a ";" (separate parameters with "&", escape a ";" in a value as %3B): GET /v1/profiles takes only agent, each at most once`},
		{"trailing semicolon", "GET", "/v1/decisions?agent=coder&limit=1;&from_seq=999", "", "",
			serve.CodeInvalidRequest, `query pair "limit=1;" has a ";" (separate parameters with "&", escape a ";" in a value as %3B): GET /v1/decisions takes only agent, from_seq, since, limit, until, provider, reason, outcome, each at most once`},
		{"bad escape", "GET", "/v1/profiles?agent=coder&%zz", "", "",
			serve.CodeInvalidRequest, `query pair "%zz" is not URL-encoded: invalid URL escape "%zz": GET /v1/profiles takes only agent, each at most once`},
		// A POST takes no query; a GET no body.
		{"POST with a query", "POST", "/v1/turns?agent=coder", `{"session":"q"}`, "",
			serve.CodeInvalidRequest, `unknown query parameter "agent": POST /v1/turns takes no query parameters`},
		{"reset with a query", "POST", "/v1/sessions/main/x/reset?kind=new", "", "",
			serve.CodeInvalidRequest, `unknown query parameter "kind": POST /v1/sessions/{agent}/{session}/reset takes no query parameters`},
		{"GET with a body", "GET", "/v1/profiles", `{"agent":"coder"}`, "",
			serve.CodeInvalidRequest, `GET /v1/profiles takes no request body; send its input in the path and query`},
		// Turn ids in paths are checked as at begin.
		{"turn id not UTF-8", "GET", "/v1/turns/a%FF", "", "", serve.CodeInvalidRequest, `turn_id is not valid UTF-8`},
		{"turn id too long", "GET", "/v1/turns/" + long, "", "", serve.CodeInvalidRequest, `turn_id is 600 bytes; the limit is 512`},
		{"outcome turn id too long", "POST", "/v1/turns/" + long + "/outcomes", `{"attempt":1,"ok":true}`, "", serve.CodeInvalidRequest, `turn_id is 600 bytes; the limit is 512`},
		// Dot segments cannot be addressed in a path.
		{"dot session", "POST", "/v1/turns", `{"session":"."}`, "turns.begin",
			serve.CodeInvalidRequest, `session "." is a dot segment, which a URL path cannot hold: choose another id`},
		{"dot-dot turn id", "POST", "/v1/turns", `{"session":"s","turn_id":".."}`, "turns.begin",
			serve.CodeInvalidRequest, `turn_id ".." is a dot segment, which a URL path cannot hold: choose another id`},
		// A blank id, or one holding a control character, names no one.
		{"blank session", "POST", "/v1/turns", `{"session":" "}`, "turns.begin",
			serve.CodeInvalidRequest, `session " " is only white space`},
		{"line break in a turn id", "POST", "/v1/turns", `{"session":"s","turn_id":"t\n1"}`, "turns.begin",
			serve.CodeInvalidRequest, `turn id holds the control character U+000A at byte 1`},
		// Free text stored for good: one line of 1..128 bytes.
		{"line break in by", "POST", "/v1/agents/main/auth/order/openai", `{"profiles":["openai:a"],"by":"x\nFAKE LINE"}`, "",
			serve.CodeInvalidRequest, `by holds the control character U+000A at byte 1`},
		{"escape in by", "POST", "/v1/agents/main/auth/order/openai", `{"profiles":["openai:a"],"by":"\u001b[2J"}`, "",
			serve.CodeInvalidRequest, `by holds the control character U+001B at byte 0`},
		{"blank by", "POST", "/v1/agents/main/auth/order/openai", `{"profiles":["openai:a"],"by":" "}`, "",
			serve.CodeInvalidRequest, `by " " is only white space`},
		{"long by", "POST", "/v1/agents/main/auth/order/openai", `{"profiles":["openai:a"],"by":"` + strings.Repeat("b", 200) + `"}`, "",
			serve.CodeInvalidRequest, `by is 200 bytes; the limit is 128`},
		// Model references: what a config refuses (wildcards, white space,
		// control characters in the provider or the model).
		{"wildcard model at begin", "POST", "/v1/turns", `{"session":"w","model":"*/>"}`, "turns.begin",
			serve.CodeInvalidRequest, `model "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`},
		{"wildcard in a model name", "POST", "/v1/sessions/main/w/model", `{"model":"openai/gpt-*"}`, "",
			serve.CodeInvalidRequest, `model "openai/gpt-*": model "gpt-*" contains a wildcard (* or >); name one model exactly`},
		{"wildcard origin", "POST", "/v1/sessions/main/p1/model", `{"model":"openai/gpt-5","origin":"*/>","source":"auto"}`, "",
			serve.CodeInvalidRequest, `origin "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`},
		{"wildcard fallback", "POST", "/v1/turns", `{"session":"w","fallbacks_override":["openai/>"]}`, "turns.begin",
			serve.CodeInvalidRequest, `fallbacks_override[0] "openai/>": model ">" contains a wildcard (* or >); name one model exactly`},
		{"escape in a model", "POST", "/v1/turns", `{"session":"w","model":"openai/gpt\u001b[2J"}`, "turns.begin",
			serve.CodeInvalidRequest, `model "openai/gpt\x1b[2J": model "gpt\x1b[2J" contains whitespace or control characters`},
		// Decisions: a sequence JavaScript holds exactly.
		{"from_seq above 2^53 − 1", "GET", "/v1/decisions?from_seq=9007199254740992", "", "",
			serve.CodeInvalidRequest, `from_seq must be at most 9007199254740991 (2^53 − 1)`},
	}
	before := testutil.LastSeq(t, st)
	for _, c := range cases {
		status, b := do(t, c.method, srv.url+c.path, c.body)
		if got := errorBody(t, b); status != 400 || got != (serve.ErrorBody{Error: c.code, Detail: c.detail}) {
			t.Errorf("%s: HTTP %d %s\nwant 400 %s %q", c.name, status, b, c.code, c.detail)
		}
		if c.micro == "" {
			continue
		}
		m, err := mc.Request(serve.MicroPrefix+"."+c.micro, []byte(c.body), 5*time.Second)
		testutil.NoError(t, err)
		var eb serve.ErrorBody
		_ = json.Unmarshal(m.Data, &eb)
		if m.Header.Get("Nats-Service-Error-Code") != "400" || eb != (serve.ErrorBody{Error: c.code, Detail: c.detail}) {
			t.Errorf("%s: micro %v %s\nwant 400 %s %q", c.name, m.Header, m.Data, c.code, c.detail)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
}

// What the strict decoder still takes: the provider's own body inside an
// outcome's error is its JSON (duplicates there are the provider's), an
// empty optional body, a lower-case RFC 3339 "t" and "z", from_seq at
// 2^53 − 1, and a begin with "turn_id": "" (absent = generated).
func TestHTTP_StrictInputAccepted(t *testing.T) {
	srv, _, _ := strictServer(t)
	for _, c := range []struct{ name, method, path, body string }{
		{"begin", "POST", "/v1/turns", `{"session":"s","turn_id":"t1"}`},
		{"provider body duplicates", "POST", "/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":500,"body":{"a":1,"a":2},"message":{"m":1,"m":2}}}`},
		{"empty optional body", "POST", "/v1/sessions/main/s/reset", ``},
		{"lower-case t and z", "GET", "/v1/decisions?since=2026-12-06t05:00:00z", ""},
		{"from_seq at 2^53 − 1", "GET", "/v1/decisions?from_seq=9007199254740991", ""},
		{"empty turn id", "POST", "/v1/turns", `{"session":"s2","turn_id":""}`},
		{"escaped query", "GET", "/v1/profiles?agent=cod%65r", ""},
	} {
		if status, b := do(t, c.method, srv.url+c.path, c.body); status != 200 {
			t.Errorf("%s: %d %s, want 200", c.name, status, b)
		}
	}
}

// A served agent is written to, so a new one's id is held to the
// config's rule for agent ids; an agent the ledger already holds (stored
// by an earlier build) is served whatever its id, and a read-only server
// (fledger view) reads any agent a ledger holds.
func TestConfig_AgentIDs(t *testing.T) {
	st, err := events.OpenMemory()
	testutil.NoError(t, err)
	defer st.Close()
	legacy := events.New("old agent", "openai", testutil.T0, events.AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:a"}, By: "cli"})
	_, err = st.Append(context.Background(), events.MustSubject("old agent", events.AggOrder, "openai"), events.AnySeq, legacy)
	testutil.NoError(t, err)
	long := strings.Repeat("a", 129)
	for _, c := range []struct {
		agents   []string
		readOnly bool
		want     string
	}{
		{[]string{"main", "coder"}, false, ""},
		{[]string{"*"}, false, `serve: agent "*" contains a wildcard (* or >); name one agent id exactly`},
		{[]string{"main", "a>"}, false, `serve: agent "a>" contains a wildcard (* or >); name one agent id exactly`},
		{[]string{"my agent"}, false, `serve: agent "my agent" contains whitespace or control characters`},
		{[]string{"old agent"}, false, ""},
		{[]string{long}, false, `serve: agent "` + long + `": events: invalid subject: agent is 129 bytes, the limit is 128`},
		{[]string{"main", ""}, false, `serve: agent 2 of 2 is empty (a trailing or doubled comma in --agent?)`},
		{[]string{"main", "main"}, false, `serve: agent "main" listed twice`},
		{[]string{"*"}, true, ""},
	} {
		before := testutil.LastSeq(t, st)
		svc, err := serve.New(context.Background(), serve.Config{Store: st, Agents: c.agents, ReadOnly: c.readOnly, Config: configUnlessReadOnly(t, c.readOnly)})
		if svc != nil {
			if c.agents[0] == "old agent" {
				// Its turns begin too: the agent rule is not asked again.
				if _, err := svc.Begin(context.Background(), &serve.BeginRequest{Session: "s1"}); err != nil {
					t.Errorf("a turn of the stored agent: %v", err)
				}
			}
			svc.Close(context.Background())
		} else if after := testutil.LastSeq(t, st); after != before {
			t.Errorf("agents %q: refused, yet %d messages appended", c.agents, after-before)
		}
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("agents %q (read-only %v): %v, want %q", c.agents, c.readOnly, err, c.want)
		}
	}
}

// configUnlessReadOnly is loadConfig for a server that writes (a
// read-only one applies none).
func configUnlessReadOnly(t *testing.T, readOnly bool) *config.Loaded {
	if readOnly {
		return nil
	}
	return loadConfig(t)
}
