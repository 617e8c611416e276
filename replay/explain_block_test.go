package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// stepWith returns the first step whose text contains s, with its details
// joined by newlines.
func stepWith(t *testing.T, x *replay.Explanation, s string) string {
	t.Helper()
	for _, st := range x.Steps {
		if strings.Contains(st.Text, s) {
			return st.Text + "\n" + strings.Join(st.Details, "\n")
		}
	}
	var all []string
	for _, st := range x.Steps {
		all = append(all, st.Text)
	}
	t.Fatalf("no step with %q in:\n%s", s, strings.Join(all, "\n"))
	return ""
}

func mustContain(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

// Issue 17: explain shows where a block's deadline came from — the
// provider's reset, the field it was read from and the value as written —
// and that the long window skipped the same-model retries.
func TestExplain_CodexUsageLimitShowsWhereTheDeadlineCameFrom(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "codex-usage-limit", "x")
	x, err := replay.Explain(context.Background(), st, "x", "usage-limit")
	testutil.NoError(t, err)
	mustContain(t, stepWith(t, x, "failed (300 ms)"),
		`a long usage window (subscription; field code, matched "usage_limit_reached"): no same-model retry`,
		`provider reset at 2026-03-11T08:00:00.300Z (+24h0m0.3s), read from message "resets_in_seconds=86400" (codex_rate_limits)`)
	mustContain(t, stepWith(t, x, "profile openai:dana@example.com"),
		"rate_limit failure #1 → blocked until 2026-03-11T08:00:00.300Z (+24h0m0.3s) (subscription_limit from codex_rate_limits, model gpt-5 only)",
		`the deadline is the provider's own reset (message "resets_in_seconds=86400", codex_rate_limits), not a ladder step`)
}

// A success on gpt-5-mini keeps gpt-5's cooldown with its errorCount:
// explain no longer says "failure state cleared" there.
func TestExplain_ModelScopedSuccessSaysWhatItKept(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "model-scoped-cooldown", "x")
	x, err := replay.Explain(context.Background(), st, "x", "tpm-limited")
	testutil.NoError(t, err)
	got := stepWith(t, x, "success recorded on gpt-5-mini")
	if strings.Contains(got, "failure state cleared") {
		t.Errorf("says cleared:\n%s", got)
	}
	mustContain(t, got, "nothing cleared: errorCount 1", "the rate_limit cooldown of model gpt-5 are kept",
		"a rate_limit cooldown for model gpt-5 until")
}

// With one attempt OpenClaw rethrows the provider's error as is: explain
// says that this text reached the user, not the stored summary.
func TestExplain_SingleAttemptSaysWhichTextReachedTheUser(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "user-model-strict", "x")
	x, err := replay.Explain(context.Background(), st, "x", "strict-fails")
	testutil.NoError(t, err)
	mustContain(t, x.End, "after a single attempt: the user sees the provider's own error as it is",
		`"ChatGPT error 429:`, "(billing, openai/gpt-5)")
	if strings.Contains(x.End, "All models failed") {
		t.Errorf("end shows the summary: %s", x.End)
	}
	mustContain(t, stepWith(t, x, "after a single attempt"), "recorded summary (not shown with a single attempt): All models failed (1)")
}

// Seed 000 "Selection source policy": an agent primary is strict unless
// its model object lists fallbacks; `fallbacks: []` makes it explicitly
// strict, and explain says which.
func TestExplain_AgentStrictByExplicitlyEmptyFallbacks(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
name: agent-strict
start: "2026-03-01T10:00:00Z"
config:
  auth: {profiles: {"openai:k": {provider: openai, type: api_key}, "anthropic:k": {provider: anthropic, type: api_key}}}
  agents:
    defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-sonnet-4-5]}}
    entries:
      coder: {model: {primary: anthropic/claude-opus-4-6, fallbacks: []}}
      helper: {model: openai/gpt-5-mini}
default: {candidate: anthropic/claude-opus-4-6, ok: true}
script:
  - at: "+0s"
    turn: {id: coder-turn, session: s1, agent: coder}
  - at: "+1s"
    turn: {id: helper-turn, session: s2, agent: helper, responses: [{candidate: openai/gpt-5-mini, ok: true}]}
`), "inline")
	testutil.NoError(t, err)
	st := openStore(t)
	_, err = scenario.Run(context.Background(), st, sc, scenario.Options{Agent: "x"})
	testutil.NoError(t, err)
	x, err := replay.Explain(context.Background(), st, "x", "coder-turn")
	testutil.NoError(t, err)
	mustContain(t, x.Why, "agents.entries.coder.model", "strict because its fallbacks are explicitly empty (fallbacks: [])")
	x, err = replay.Explain(context.Background(), st, "x", "helper-turn")
	testutil.NoError(t, err)
	mustContain(t, x.Why, "agents.entries.helper.model", "strict because its model lists no fallbacks of its own")
}
