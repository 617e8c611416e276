package serve_test

import (
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A Codex usage-limit 429 reported through the HTTP step protocol blocks
// the subscription profile until exactly the reported reset, and
// GET /v1/profiles shows the block: blockedUntil, reason, source, model.
func TestHTTP_ProfilesShowTheSubscriptionBlock(t *testing.T) {
	const cfg = `
auth:
  profiles:
    "openai:sub": {provider: openai, type: oauth}
    "openai:key": {provider: openai, type: api_key}
  order:
    openai: ["openai:sub", "openai:key"]
agents:
  defaults:
    model:
      primary: openai/gpt-5
`
	l, err := config.Parse([]byte(cfg), "test")
	testutil.NoError(t, err)
	clock := testutil.NewManualClock(testutil.T0)
	srv := startServer(t, testutil.Store(t), serve.Config{Config: l, EngineOptions: []engine.Option{engine.WithClock(clock)}})
	ctx := testutil.Context(t)
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: "s"})
	testutil.NoError(t, err)
	if step.Next.Profile != "openai:sub" {
		t.Fatalf("first call %+v", step.Next)
	}
	step, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: step.Next.Attempt, Error: &client.ProviderError{
		Status: 429, Code: "usage_limit_reached",
		Message: `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_in_seconds":86400}}`}})
	testutil.NoError(t, err)
	// A long usage window: no same-profile retry, the next profile at once.
	if step.Next.Action != "call" || step.Next.Profile != "openai:key" {
		t.Fatalf("after the usage limit: %+v", step.Next)
	}
	profiles, err := srv.cl.Profiles(ctx, "")
	testutil.NoError(t, err)
	var sub *client.Profile
	for i := range profiles {
		if profiles[i].ID == "openai:sub" {
			sub = &profiles[i]
		}
	}
	want := events.Millis(testutil.T0) + 86_400_000
	if sub == nil || sub.BlockedUntil != want || sub.BlockedReason != "subscription_limit" || sub.BlockedSource != "codex_rate_limits" ||
		sub.BlockedModel != "gpt-5" || sub.CooldownUntil != 0 || sub.Usable {
		t.Fatalf("openai:sub %+v, want blocked until %d", sub, want)
	}
}
