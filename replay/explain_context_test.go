package replay_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/scenario"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// wordingScenario has every turn the explain wording cases read: cron
// runs with and without payload fallbacks, a primary probed then skipped
// with the probe throttle closed and then open, and a strict turn whose
// only candidate is skipped (no call at all).
const wordingScenario = `
name: explain-wording
start: "2026-04-02T09:00:00Z"
config:
  auth: {profiles: {"openai:a": {provider: openai, type: api_key}, "anthropic:w": {provider: anthropic, type: api_key}}}
  agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-opus-4-6]}}}
  retry: {provider: {maxRetries: 0}}
default: {candidate: anthropic/claude-opus-4-6, ok: true}
script:
  - at: "+0s"
    turn: {id: widen, session: p, responses: [{candidate: openai/gpt-5, error: {status: 429, message: "429 Rate limit reached for requests"}}]}
  - at: "+10s"
    turn: {id: probed, session: p, responses: [{candidate: openai/gpt-5, error: {status: 429, message: "429 Rate limit reached for requests"}}]}
  - at: "+25s"
    turn: {id: throttled, session: p}
  - at: "+26s"
    turn: {id: cron-payload, session: "cron:a", model: anthropic/claude-opus-4-6, source: cron, fallbacks: [anthropic/claude-sonnet-4-5]}
  - at: "+27s"
    turn: {id: cron-configured, session: "cron:b", model: anthropic/claude-opus-4-6, source: cron}
  - at: "+28s"
    turn: {id: cron-strict, session: "cron:c", model: anthropic/claude-opus-4-6, source: cron, fallbacks: []}
  - at: "+28.5s"
    command: {do: model, session: u, model: openai/gpt-5}
  - at: "+29s"
    turn: {id: no-call, session: u}
  - at: "+30s"
    turn: {id: user-override, session: v, model: openai/gpt-5, fallbacks_override: [anthropic/claude-sonnet-4-5], responses: [{candidate: openai/gpt-5, error: {status: 429, message: "429 Rate limit reached for requests"}}, {candidate: anthropic/claude-sonnet-4-5, ok: true}]}
`

// The explain wording of the fresh-user pass (issue 22): a cron payload's
// fallbacks are labelled as the payload's (and the why says so), a
// primary the probe throttle kept from being probed says so, a turn that
// called nobody ends "without any attempt", and a deadline after a skip
// or an exhaustion says how far it is from that step (the "(+…)" after an
// absolute time is the offset from the turn's start, like the left
// column).
func TestExplain_WordingOfTheFreshUserPass(t *testing.T) {
	sc, err := scenario.Parse([]byte(wordingScenario), "inline")
	testutil.NoError(t, err)
	st := openStore(t)
	_, err = scenario.Run(context.Background(), st, sc, scenario.Options{Agent: "w"})
	testutil.NoError(t, err)
	explain := func(id string) (*replay.Explanation, string) {
		x, err := replay.Explain(context.Background(), st, "w", id)
		testutil.NoError(t, err)
		var b strings.Builder
		testutil.NoError(t, replay.WriteExplanation(&b, x))
		return x, b.String()
	}
	for _, c := range []struct {
		turn      string
		want, not []string
	}{
		{"cron-payload", []string{"2. anthropic/claude-sonnet-4-5 (cron payload fallback)",
			"this payload lists its own (payload.fallbacks): the chain is the cron model then those, with no configured primary appended"},
			[]string{"(configured-fallback)"}},
		{"cron-configured", []string{"2. openai/gpt-5 (configured-primary)"}, []string{"cron payload fallback", "this payload"}},
		{"cron-strict", []string{"this payload's fallbacks are empty (payload.fallbacks: []): a strict cron run. The chain is this model alone."}, nil},
		{"throttled", []string{
			"skip openai/gpt-5: Provider openai is in cooldown (rate_limit, suspend)",
			"soonest profile expiry 2026-04-02T09:00:30.000Z (+5s), 5s after this skip",
			"not probed: the probe throttle allows one primary probe per provider every 30s (failover.probeThrottleMs), " +
				"and openai's last was at 2026-04-02T09:00:10.000Z, 15s before this skip, so it was still closed; " +
				"it opens at 2026-04-02T09:00:40.000Z (+15s), 15s after this skip"}, nil},
		{"probed", []string{"attempt #1 probe: openai/gpt-5 @openai:a"}, []string{"not probed"}},
		{"user-override", []string{"2. anthropic/claude-sonnet-4-5 (caller's fallbacks override)",
			"the caller supplied the turn's fallbacks (fallbacks_override): the chain is that model then exactly those, with no configured primary appended"},
			[]string{"a user's choice is strict", "(configured-fallback)"}},
		{"no-call", []string{"outcome    exhausted (0s) without any attempt (the only candidate was skipped): the user sees the reason it was skipped as it is",
			"recorded summary (not shown when the only candidate was skipped)"}, []string{"single attempt"}},
	} {
		t.Run(c.turn, func(t *testing.T) {
			_, text := explain(c.turn)
			mustContain(t, text, c.want...)
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("has %q:\n%s", n, text)
				}
			}
		})
	}
	x, _ := explain("cron-payload")
	if e := x.Chain[1]; e.RouteOrigin != "configured-fallback" || e.Label != replay.LabelCronFallback {
		t.Errorf("chain entry %+v: the recorded route origin with the payload label", e)
	}
}
