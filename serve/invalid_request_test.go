package serve_test

import (
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// Ids longer than the events package's key limit are refused at begin
// (and at every session command) with 400 naming the field and the
// limit; nothing is appended, not even a model selection sent with the
// begin.
func TestHTTP_OverlongIdsRefusedUpFront(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	long := strings.Repeat("k", events.MaxKeyLen+88)
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ name, method, path, body, field string }{
		{"begin session", "POST", "/v1/turns", `{"session":"` + long + `"}`, "session"},
		{"begin turn id", "POST", "/v1/turns", `{"session":"s","turn_id":"` + long + `"}`, "turn_id"},
		{"begin turn id with model", "POST", "/v1/turns", `{"session":"s","model":"openai/gpt-5","turn_id":"` + long + `"}`, "turn_id"},
		{"model", "POST", "/v1/sessions/main/" + long + "/model", `{"model":"openai/gpt-5"}`, "session"},
		{"model profile", "POST", "/v1/sessions/main/s/model", `{"model":"openai/gpt-5@openai:` + long + `"}`, "profile"},
		{"pin", "POST", "/v1/sessions/main/s/pin", `{"profile":"` + long + `"}`, "profile"},
		{"reset", "POST", "/v1/sessions/main/" + long + "/reset", ``, "session"},
		{"model name", "POST", "/v1/sessions/main/s/model", `{"model":"anthropic/` + long + `"}`, "model"},
		{"begin model name", "POST", "/v1/turns", `{"session":"s","model":"anthropic/` + long + `"}`, "model"},
	} {
		status, b := do(t, c.method, srv.url+c.path, c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidRequest || !strings.Contains(eb.Detail, c.field) || !strings.Contains(eb.Detail, "512") {
			t.Errorf("%s: %d %s, want 400 invalid_request naming %s and 512", c.name, status, b, c.field)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused requests appended (%d → %d)", before, now)
	}
}

// A refusal that quotes the value it refuses does not echo a huge one
// back: the detail keeps its head and its tail (what is wrong) within
// about 1 KiB and says how much it left out.
func TestHTTP_HugeValueDetailIsCut(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s","chat":"`+strings.Repeat("x", 900_000)+`"}`)
	eb := errorBody(t, b)
	if status != 400 || eb.Error != serve.CodeInvalidRequest || len(b) > 2048 || !strings.HasPrefix(eb.Detail, `chat "xxx`) ||
		!strings.HasSuffix(eb.Detail, `xxx" is not direct|group|channel`) || !strings.Contains(eb.Detail, " bytes left out) …") {
		t.Fatalf("%d, %d-byte body %.300s…, want 400 invalid_request naming chat and what is wrong, within 1 KiB", status, len(b), b)
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused request appended (%d → %d)", before, now)
	}
}

// A latency is stored (AttemptSucceeded/AttemptFailed.latency_ms) as a
// JSON number: one above 2^53 − 1, which JavaScript would round, is
// refused and nothing is appended.
func TestHTTP_LatencyBeyondExactIntegersIsRefused(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true,"latency_ms":9007199254740992}`)
	eb := errorBody(t, b)
	if status != 400 || eb.Error != serve.CodeInvalidRequest || eb.Detail != "latency_ms must be from 0 to 9007199254740991 (2^53 − 1)" {
		t.Fatalf("%d %s, want 400 invalid_request naming latency_ms and its range", status, b)
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused outcome appended (%d → %d)", before, now)
	}
}

// JSON decode errors name the request's fields, never Go types.
func TestHTTP_DecodeErrorsNameFields(t *testing.T) {
	srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0))
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	for _, c := range []struct{ path, body, want string }{
		{"/v1/turns", `[]`, "body must be a JSON object"},
		{"/v1/turns", `"x"`, "body must be a JSON object"},
		{"/v1/turns", `{"session":7}`, "session: expected a string, got number"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"headers":[1]}}`, "error.headers: expected an object of strings, got array"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":[]}`, "error: expected an object, got array"},
		{"/v1/turns/t1/outcomes", `{"attempt":"one","ok":true}`, "attempt: expected an integer, got string"},
		{"/v1/turns/t1/outcomes", `{"attempt":1.5,"ok":true}`, "attempt: expected an integer, got number 1.5"},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":{}}}`, "error.status: "},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"code":[1]}}`, "error.code: "},
		{"/v1/turns/t1/outcomes", `{"attempt":1,"error":{"status":"9007199254740993"}}`, `error: status: "9007199254740993" is not an HTTP status`},
	} {
		status, b := do(t, "POST", srv.url+c.path, c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidJSON || !strings.HasPrefix(eb.Detail, c.want) {
			t.Errorf("%s: %d %s, want 400 invalid_json %q", c.body, status, b, c.want)
		}
		for _, leak := range []string{"Go ", "serve.", "classify.", "struct", "json:", "Wire"} {
			if strings.Contains(eb.Detail, leak) {
				t.Errorf("%s: detail %q leaks %q", c.body, eb.Detail, leak)
			}
		}
	}
}
