package serve_test

import (
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A cron begin's fallbacks are the payload's payload.fallbacks: the chain
// is the cron model then those, with no configured primary appended, and
// [] is a strict run: a failover error ends it instead of falling back.
// fallbacks without source cron, with an @profile or not provider/model
// are refused with 400 naming them, appending nothing.
func TestHTTP_CronFallbacksAreThePayloads(t *testing.T) {
	ctx := testutil.Context(t)
	authErr := &client.ProviderError{Status: 401, Message: "Incorrect API key provided"}
	for _, c := range []struct {
		name      string
		fallbacks []string
		next      string // the action after the cron model's auth failure
		to        string // the candidate called next
	}{
		{"payload fallbacks", []string{"google/gemini-2.5-pro"}, "call", "google/gemini-2.5-pro"},
		{"strict", []string{}, "exhausted", ""},
	} {
		srv, _ := defaultServer(t, testutil.NewManualClock(testutil.T0)) // openai:a is clean
		fb := c.fallbacks
		step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "cron:" + c.name, Model: "openai/gpt-5", Source: "cron", Fallbacks: &fb})
		testutil.NoError(t, err)
		if n := step.Next; n.Action != "call" || n.Provider+"/"+n.Model != "openai/gpt-5" {
			t.Fatalf("%s: first step %+v", c.name, n)
		}
		step, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: step.Next.Attempt, Error: authErr})
		testutil.NoError(t, err)
		if n := step.Next; n.Action != c.next || (c.to != "" && n.Provider+"/"+n.Model != c.to) {
			t.Errorf("%s: after the auth failure %+v, want %s %s", c.name, n, c.next, c.to)
		}
	}

	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ body, names string }{
		{`{"session":"s","model":"openai/gpt-5","fallbacks":["google/gemini-2.5-pro"]}`, "source cron"},
		{`{"session":"s","model":"openai/gpt-5","source":"cron","fallbacks":["google/gemini-2.5-pro@google:a"]}`, "fallbacks[0]"},
		{`{"session":"s","model":"openai/gpt-5","source":"cron","fallbacks":["gemini"]}`, "fallbacks[0]"},
	} {
		status, b := do(t, "POST", srv.url+"/v1/turns", c.body)
		eb := errorBody(t, b)
		if status != 400 || eb.Error != serve.CodeInvalidRequest || !strings.Contains(eb.Detail, c.names) {
			t.Errorf("%s: %d %s, want 400 invalid_request naming %s", c.body, status, b, c.names)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused begins appended (%d → %d)", before, now)
	}
}
