package config_test

import (
	"testing"
)

// Every problem of a file is listed at once: a value of the wrong kind is
// reported and left out, and the rest of the file is still checked; a
// finding that only restates the left-out value ("is required") is not
// added.
func TestParse_EveryProblemAtOnce(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"a type error and a negative count (twopass.yaml)",
			"retry:\n  provider:\n    maxRetries: -3\nfailover:\n  skipTtlMs: \"10\"\nagents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n",
			[]string{
				`failover.skipTtlMs: expected a whole number, got the string "10"`,
				"retry.provider.maxRetries: -3 is negative",
			}},
		{"neg.yaml", `auth:
  profiles:
    "openai:a": {provider: openai, type: api_key, expires: "yesterday"}
  cooldowns:
    ladderMs: [-1, 0, 1e20]
    failureWindowMs: -5
    billingBackoffHours: -1
    rateLimit: linear
retry:
  provider:
    maxRetries: -3
failover:
  skipTtlMs: 1.5
  sdkRetryMaxWaitSeconds: "60"
  chainOverloadRetry: {rounds: 1001}
agents:
  defaults:
    model:
      primary: openai/gpt-5
      fallbacks: "openai/gpt-4"
  unknownThing: 1
`, []string{
			"agents.unknownThing: unknown key",
			`agents.defaults.model.fallbacks: expected a list, got the string "openai/gpt-4"`,
			"auth.cooldowns.ladderMs[2]: 100000000000000000000 is not a whole number in range",
			`failover.sdkRetryMaxWaitSeconds: expected a whole number, got the string "60"`,
			"failover.skipTtlMs: 1.5 is not a whole number in range",
			`auth.profiles["openai:a"].expires: "yesterday" is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z) or Unix milliseconds`,
			"auth.cooldowns.ladderMs[0]: -1 is not a positive duration",
			"auth.cooldowns.ladderMs[1]: 0 is not a positive duration",
			`auth.cooldowns.rateLimit: "linear" is not ladder or exponential`,
			"auth.cooldowns.billingBackoffHours: -1 is not a positive number of hours (at most a year)",
			"auth.cooldowns.failureWindowMs: -5 is not a positive duration in milliseconds",
			"retry.provider.maxRetries: -3 is negative",
			"failover.chainOverloadRetry.rounds: 1001 is more than the limit of 1000",
		}},
		{"a primary of the wrong kind is not also missing",
			"agents: {defaults: {model: {primary: 5, fallbacks: [openai/gpt-5, gpt]}}}",
			[]string{
				"agents.defaults.model.primary: expected a string, got the number 5",
				`agents.defaults.model.fallbacks[1]: "gpt" is not provider/model`,
			}},
		{"a profile's fields of the wrong kind are not also missing",
			`auth: {profiles: {"openai:a": {provider: [openai], type: 1}}, order: {openai: ["openai:b"]}}`,
			[]string{
				`auth.profiles["openai:a"].provider: expected a string, got a list`,
				`auth.profiles["openai:a"].type: expected a string, got the number 1`,
				`auth.order.openai[0]: "openai:b" is not a profile in auth.profiles`,
			}},
		{"a list element of the wrong kind keeps the others at their index",
			"agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [true, gpt, anthropic/claude]}}}\nauth: {cooldowns: {neverCooldownProviders: [openai, 7, \"a b\"]}}",
			[]string{
				"agents.defaults.model.fallbacks[0]: expected a string, got true",
				"auth.cooldowns.neverCooldownProviders[1]: expected a string, got the number 7",
				`auth.cooldowns.neverCooldownProviders[2]: provider "a b" contains whitespace or control characters`,
				`agents.defaults.model.fallbacks[1]: "gpt" is not provider/model`,
			}},
		{"a bad $schema and canonicalVersion with the rest",
			"$schema: 1\ncanonicalVersion: 9\nretry: {provider: {maxRetries: -1}}",
			[]string{
				"$schema: expected a string (the JSON Schema editors validate the file against), got the number 1",
				"canonicalVersion: 9 is newer than this build's canonical format 4; upgrade fledger",
				"retry.provider.maxRetries: -1 is negative",
			}},
		{"a section of the wrong kind",
			"retry: 3\nfailover: {loopLimit: {min: 0}}",
			[]string{
				"retry: expected a mapping, got the number 3",
				"failover.loopLimit: need 1 <= min (0) <= max (160)",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantProblems(t, tc.text, tc.want)
		})
	}
}
