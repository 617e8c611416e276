package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// twoAgentLedger is a ledger on which agents alpha and beta each ran
// rate-limit-storm.yaml: the same turn ids (storm, still-cooling) and
// session key in both, at the same virtual times.
func twoAgentLedger(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	scen := filepath.Join("..", "..", "fixtures", "scenarios", "rate-limit-storm.yaml")
	for _, agent := range []string{"alpha", "beta"} {
		if out, err := runFledger(t, "--data", data, "run", scen, "--agent", agent); err != nil {
			t.Fatalf("run --agent %s: %v\n%s", agent, err, out)
		}
	}
	return data
}

// Rows that can come from several agents name their agent: turn storm of
// alpha and of beta are two rows that differ in AGENT, in every listing.
func TestListings_AgentColumnTellsAgentsApart(t *testing.T) {
	data := twoAgentLedger(t)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"turns", []string{"turns"}, []string{
			"STARTED               AGENT  TURN           SESSION       REQUESTED     ANSWERED BY                                  ATTEMPTS  OUTCOME    REASON  DURATION",
			"2026-03-02T14:00:00Z  alpha  storm          slack-dm-bob  openai/gpt-5  anthropic/claude-sonnet-4-5 @anthropic:main  7         succeeded  -       32.448s",
			"2026-03-02T14:00:00Z  beta   storm          slack-dm-bob  openai/gpt-5  anthropic/claude-sonnet-4-5 @anthropic:main  7         succeeded  -       32.448s",
			"2026-03-02T14:01:00Z  alpha  still-cooling  slack-dm-bob  openai/gpt-5  anthropic/claude-sonnet-4-5 @anthropic:main  7         succeeded  -       32.148s",
			"2026-03-02T14:01:00Z  beta   still-cooling  slack-dm-bob  openai/gpt-5  anthropic/claude-sonnet-4-5 @anthropic:main  7         succeeded  -       32.148s",
		}},
		{"turns --agent", []string{"turns", "--agent", "beta", "--limit", "1"}, []string{
			"STARTED               AGENT  TURN           SESSION       REQUESTED     ANSWERED BY                                  ATTEMPTS  OUTCOME    REASON  DURATION",
			"2026-03-02T14:01:00Z  beta   still-cooling  slack-dm-bob  openai/gpt-5  anthropic/claude-sonnet-4-5 @anthropic:main  7         succeeded  -       32.148s",
		}},
		{"decisions", []string{"decisions", "--turn", "storm"}, []string{
			"SEQ  AT                    AGENT  TURN   SESSION       DECISION             CANDIDATE                    ATTEMPT  REASON      STATUS  NEXT                         STEP OUTCOME",
			"11   2026-03-02T14:00:30Z  alpha  storm  slack-dm-bob  candidate_failed     openai/gpt-5                 1/2      rate_limit  429     anthropic/claude-sonnet-4-5  next_fallback",
			"12   2026-03-02T14:00:32Z  alpha  storm  slack-dm-bob  candidate_succeeded  anthropic/claude-sonnet-4-5  2/2      -           -       -                            succeeded",
			"34   2026-03-02T14:00:30Z  beta   storm  slack-dm-bob  candidate_failed     openai/gpt-5                 1/2      rate_limit  429     anthropic/claude-sonnet-4-5  next_fallback",
			"35   2026-03-02T14:00:32Z  beta   storm  slack-dm-bob  candidate_succeeded  anthropic/claude-sonnet-4-5  2/2      -           -       -                            succeeded",
		}},
		{"sessions", []string{"sessions"}, []string{
			"AGENT  SESSION       SELECTED  SOURCE  AUTO ORIGIN  PIN  PIN SOURCE  FALLBACK NOTICE                                          LAST RESET",
			"alpha  slack-dm-bob  -         -       -            -    -           openai/gpt-5 → anthropic/claude-sonnet-4-5 (rate limit)  -",
			"beta   slack-dm-bob  -         -       -            -    -           openai/gpt-5 → anthropic/claude-sonnet-4-5 (rate limit)  -",
		}},
		{"stats", []string{"stats", "--profile", "openai:team-a", "--now", "2026-03-02T14:02:00Z"}, []string{
			"AGENT  PROFILE        STATUS                                          ERRORS  FAILURES      LAST USED  LAST FAILURE",
			"alpha  openai:team-a  cooling down for 31s (rate_limit, model gpt-5)  2       rate_limit=2  -          2026-03-02T14:01:30Z",
			"beta   openai:team-a  cooling down for 31s (rate_limit, model gpt-5)  2       rate_limit=2  -          2026-03-02T14:01:30Z",
		}},
		{"events", []string{"events", "--type", "TurnStarted", "--width", "18"}, []string{
			"SEQ  AT                        AGENT  TYPE         KEY            PAYLOAD",
			`2    2026-03-02T14:00:00.000Z  alpha  TurnStarted  storm          {"turn_id":"storm"…`,
			`13   2026-03-02T14:01:00.000Z  alpha  TurnStarted  still-cooling  {"turn_id":"still-…`,
			`25   2026-03-02T14:00:00.000Z  beta   TurnStarted  storm          {"turn_id":"storm"…`,
			`36   2026-03-02T14:01:00.000Z  beta   TurnStarted  still-cooling  {"turn_id":"still-…`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got, want := strings.TrimRight(out, "\n"), strings.Join(c.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
