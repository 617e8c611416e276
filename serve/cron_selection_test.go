package serve_test

import (
	"encoding/json"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// A cron model is one turn's (a begin with source cron): `POST …/model`
// with source cron would store it on the session and make every later
// turn a cron run, so it is refused with 400 invalid_request, over HTTP
// and the micro service alike, and nothing is recorded; the session's next
// turn starts from the configured primary.
func TestHTTP_SessionModelCronRefused(t *testing.T) {
	srv, st, mc := strictServer(t)
	const cronRefused = "source cron is not a session's selection: a cron model applies to one turn only; begin that turn with source cron and its model"
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ name, body, detail string }{
		{"cron", `{"session":"cr1","model":"openai/gpt-5","source":"cron"}`, cronRefused},
		{"cron with a profile", `{"session":"cr1","model":"openai/gpt-5","source":"cron","profile":"openai:a"}`, cronRefused},
		{"cron default", `{"session":"cr1","model":"default","source":"cron"}`, cronRefused},
		{"unknown source", `{"session":"cr1","model":"openai/gpt-5","source":"manual"}`, `source "manual" is not user|default|auto|legacy`},
	} {
		want := serve.ErrorBody{Error: serve.CodeInvalidRequest, Detail: c.detail}
		status, b := do(t, "POST", srv.url+"/v1/sessions/main/cr1/model", c.body)
		if got := errorBody(t, b); status != 400 || got != want {
			t.Errorf("%s: HTTP %d %s\nwant 400 %+v", c.name, status, b, want)
		}
		if code, eb := microAnswer(t, mc, "sessions.model", c.body); code != "400" || eb != want {
			t.Errorf("%s: micro %s %+v\nwant 400 %+v", c.name, code, eb, want)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused selections appended (%d → %d)", before, now)
	}
	status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"cr1","turn_id":"c1"}`)
	var step serve.TurnStep
	if status != 200 || json.Unmarshal(b, &step) != nil || step.Next.Provider+"/"+step.Next.Model != "anthropic/claude-opus-4-6" {
		t.Fatalf("begin after the refusals: %d %s, want a call of the configured primary", status, b)
	}
	// The cron model of one turn is the begin's.
	status, b = do(t, "POST", srv.url+"/v1/turns", `{"session":"cr1","turn_id":"c2","model":"openai/gpt-5","source":"cron"}`)
	if status != 200 || json.Unmarshal(b, &step) != nil || step.Next.Provider+"/"+step.Next.Model != "openai/gpt-5" {
		t.Fatalf("begin with source cron: %d %s, want a call of openai/gpt-5", status, b)
	}
}
