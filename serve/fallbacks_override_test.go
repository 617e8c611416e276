package serve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A begin's fallbacks_override is the caller's fallbacksOverride (seed 000
// "Candidate chain rules": "the runner uses exactly the requested model
// plus that override list. An empty list disables model fallback and
// prevents the configured primary from being appended"), whatever the
// selection source: the recorded chain is the selected model then the
// list, TurnStarted says an override was given, and verify re-decides it.
func TestHTTP_FallbacksOverrideIsTheChain(t *testing.T) {
	ctx := testutil.Context(t)
	for _, c := range []struct {
		name, model string
		override    []string
		chain       string // the recorded chain
		strict      bool
	}{
		// The default selection would be opus, gpt-5, and no primary again.
		{"default selection, another list", "", []string{"google/gemini-2.5-pro"}, "anthropic/claude-opus-4-6 google/gemini-2.5-pro", false},
		{"default selection, strict", "", []string{}, "anthropic/claude-opus-4-6", true},
		// A user selection is strict by itself; the caller's list wins.
		{"user selection with a list", "openai/gpt-5", []string{"anthropic/claude-opus-4-6"}, "openai/gpt-5 anthropic/claude-opus-4-6", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
			ov := c.override
			step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s", Model: c.model, FallbacksOverride: &ov})
			testutil.NoError(t, err)
			var ts events.TurnStarted
			for ev, err := range st.Read(ctx, 1) {
				testutil.NoError(t, err)
				if p, ok := ev.Data.(events.TurnStarted); ok {
					ts = p
				}
			}
			var chain []string
			for _, cand := range ts.Chain {
				chain = append(chain, cand.Provider+"/"+cand.Model)
			}
			if strings.Join(chain, " ") != c.chain || ts.Strict != c.strict || !ts.FallbacksOverride {
				t.Fatalf("TurnStarted chain %v strict %v fallbacks_override %v, want %s strict %v and the override recorded", chain, ts.Strict, ts.FallbacksOverride, c.chain, c.strict)
			}
			_, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: step.Next.Attempt, OK: true})
			testutil.NoError(t, err)
			rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
			testutil.NoError(t, err)
			if rep.Diverged != 0 {
				t.Fatalf("verify: %+v", rep.Divergences)
			}
		})
	}

	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	before := testutil.LastSeq(t, st)
	for _, c := range []struct{ body, names string }{
		{`{"session":"s","fallbacks_override":["google/gemini-2.5-pro@google:a"]}`, "fallbacks_override[0]"},
		{`{"session":"s","fallbacks_override":["gemini"]}`, "fallbacks_override[0]"},
		{`{"session":"s","model":"openai/gpt-5","source":"cron","fallbacks":[],"fallbacks_override":[]}`, "both given"},
		{`{"session":"s","fallbacks_override":[" openai/gpt-5"]}`, "provider \" openai\" contains whitespace"},
		{`{"session":"s","fallbacks_override":[null]}`, "fallbacks_override[0] is empty (or null)"},
		{`{"session":"s","fallbacks_override":[` + strings.Repeat(`"openai/gpt-5",`, 64) + `"openai/gpt-5"]}`, "65 entries; at most 64"},
		{`{"session":"s","model":"openai/gpt-5","source":"cron","fallbacks":[` + strings.Repeat(`"openai/gpt-5",`, 64) + `"openai/gpt-5"]}`, "fallbacks has 65 entries"},
		{`{"session":"s","model":" openai/gpt-5"}`, "provider \" openai\" contains whitespace"},
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
