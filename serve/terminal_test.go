package serve_test

import (
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve/client"
)

// What a gateway shows when a turn ends on an error that does not advance
// (issue 22, rule revision 2): a format error on the primary, and an
// unrecognized error on the last candidate, answer stop (disposition
// failover) with the provider's own message, not an exhaustion summary;
// the repeated report replays the same answer.
func TestHTTP_TerminalErrorsSurfaceTheProvidersError(t *testing.T) {
	format := &client.ProviderError{Status: 400, Code: "invalid_request_error", Type: "invalid_request_error",
		Message: `Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"}}`}
	odd := &client.ProviderError{Message: "Local llama.cpp is unavailable.\nReason: ENOENT"}
	overloaded := &client.ProviderError{Status: 529, Message: "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment."}
	cases := []struct {
		name string
		// fail answers each call by provider.
		fail    map[string]*client.ProviderError
		reason  string
		message string
	}{
		{"a format error on the primary", map[string]*client.ProviderError{"anthropic": format}, "format", format.Message},
		{"an unclassified error on the last candidate", map[string]*client.ProviderError{"anthropic": overloaded, "openai": odd},
			"unclassified", odd.Message},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := testutil.NewManualClock(testutil.T0)
			srv, _ := defaultServer(t, clock)
			ctx := testutil.Context(t)
			step, err := srv.cl.Begin(ctx, client.BeginRequest{Agent: "main", Session: "s1"})
			testutil.NoError(t, err)
			var last client.Outcome
			for i := 0; step.Next.Action == "call" || step.Next.Action == "wait"; i++ {
				if i > 20 {
					t.Fatalf("no end: %+v", step.Next)
				}
				if step.Next.Action == "wait" {
					clock.Advance(time.Duration(step.Next.Ms) * time.Millisecond)
					step, err = srv.cl.Resume(ctx, step.TurnID)
					testutil.NoError(t, err)
					continue
				}
				last = client.Outcome{Attempt: step.Next.Attempt, Error: tc.fail[step.Next.Provider]}
				step, err = srv.cl.Report(ctx, step.TurnID, last)
				testutil.NoError(t, err)
			}
			n := step.Next
			if n.Action != "stop" || n.Disposition != "failover" || n.Reason != tc.reason || n.Message != tc.message || n.Summary != "" {
				t.Fatalf("next %+v", n)
			}
			again, err := srv.cl.Report(ctx, step.TurnID, last)
			testutil.NoError(t, err)
			if !again.Replayed || again.Next.Action != "stop" || again.Next.Message != tc.message {
				t.Fatalf("replayed %+v", again.Next)
			}
		})
	}
}
