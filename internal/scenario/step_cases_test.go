package scenario

import "testing"

// A cron turn's fallbacks and a response's output_started / tool_started
// do what the format says, as the expectations after them show; a wrong
// expectation (or the flag taken away) names the turn, the field, want
// and got.
func TestCheck_CronFallbacksAndReplayUnsafeResponses(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "cron payload fallbacks, and [] strict", config: openaiFirst, body: `script:
  - at: "+0s"
    turn:
      id: cron-fb
      session: cron:a
      model: openai/gpt-5
      source: cron
      fallbacks: [google-gemini/gemini-2.5-flash]
      responses:
        - {candidate: openai/gpt-5, vector: RE-017, error: ` + authErr + `, repeat: 2}
        - {candidate: google-gemini/gemini-2.5-flash, ok: true}
      expect:
        chain: [openai/gpt-5, google-gemini/gemini-2.5-flash]
        answered_by: google-gemini/gemini-2.5-flash
        session: {model: none, source: none}
  - at: "+1m"
    turn:
      id: cron-strict
      session: cron:b
      model: openai/gpt-5
      source: cron
      fallbacks: []
      responses:
        - {candidate: openai/gpt-5, vector: RE-017, error: ` + authErr + `, repeat: 2}
      expect: {outcome: exhausted, chain: [openai/gpt-5], tried_profiles: ["openai:a", "openai:b"]}
`, wrong: []wrongExpect{
			{`chain: [openai/gpt-5, google-gemini/gemini-2.5-flash]`, `chain: [openai/gpt-5, google-gemini/gemini-2.5-flash, anthropic/claude-sonnet-4-5]`,
				[]string{"turn cron-fb", "chain", `want ["openai/gpt-5", "google-gemini/gemini-2.5-flash", "anthropic/claude-sonnet-4-5"]`,
					`got  ["openai/gpt-5", "google-gemini/gemini-2.5-flash"]`}},
			{`expect: {outcome: exhausted, chain: [openai/gpt-5]`, `expect: {outcome: exhausted, chain: [openai/gpt-5, anthropic/claude-sonnet-4-5]`,
				[]string{"turn cron-strict", "chain", `want ["openai/gpt-5", "anthropic/claude-sonnet-4-5"]`, `got  ["openai/gpt-5"]`}},
		}},
		{name: "output_started and tool_started: no retry, no whole-chain retry", config: openaiFirst, body: `default: {candidate: openai/gpt-5, vector: RE-003, error: ` + overloadErr + `}
script:
  - at: "+0s"
    turn:
      id: unsafe
      session: s
      responses:
        - {candidate: openai/gpt-5, vector: RE-003, output_started: true, repeat: 2, error: ` + overloadErr + `}
        - {candidate: anthropic/claude-sonnet-4-5, vector: RE-003, tool_started: true, error: ` + overloadErr + `}
        - {candidate: anthropic/claude-sonnet-4-5, ok: true}
      expect:
        outcome: exhausted
        attempt_kinds: [first, rotation, fallback]
`, wrong: []wrongExpect{
			{`attempt_kinds: [first, rotation, fallback]`, `attempt_kinds: [first, retry, rotation, fallback]`,
				[]string{"turn unsafe", "attempt_kinds", `want ["first", "retry", "rotation", "fallback"]`, `got  ["first", "rotation", "fallback"]`}},
			// Replay-safe, the first profile is retried on the same model.
			{`output_started: true, `, ``, []string{"turn unsafe", "attempt_kinds", `want ["first", "rotation", "fallback"]`, `got  ["first", "retry", "retry", "retry", "rotation"`}},
		}},
		{name: "tool_started alone turns the whole-chain overload retry off", config: openaiFirst, body: `default: {candidate: openai/gpt-5, vector: RE-003, error: ` + overloadErr + `}
script:
  - at: "+0s"
    turn:
      id: tool
      session: s
      responses:
        - {candidate: anthropic/claude-sonnet-4-5, vector: RE-003, tool_started: true, error: ` + overloadErr + `}
        - {candidate: anthropic/claude-sonnet-4-5, ok: true}
      expect: {outcome: exhausted}
`, wrong: []wrongExpect{
			// Replay-safe, every candidate only overloaded: the whole chain is retried and Claude answers.
			{`tool_started: true, `, ``, []string{"turn tool", "outcome", `want "exhausted"`, `got  "succeeded"`}},
		}},
	})
}

// The gateway steps (use, remove_profile, restart, sessions_reset) do what
// the format says, as the expectations after them show; a wrong
// expectation names the step, the field, want and got.
func TestCheck_GatewaySteps(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "use seeds lastUsed", config: openaiFirst, body: `script:
  - at: "+0s"
    command: {do: use, profile: "openai:a"}
  - at: "+1m"
    turn: {id: t, session: s, responses: [{candidate: openai/gpt-5, ok: true}], expect: {tried_profiles: ["openai:b"]}}
expect:
  profiles:
    "openai:a": {lastUsed: "+0s"}
  sessions:
    "seed:openai:a": {model: openai/gpt-5, source: user, pin: "openai:a", pin_source: user}
`, wrong: []wrongExpect{
			{`tried_profiles: ["openai:b"]`, `tried_profiles: ["openai:a"]`, []string{"turn t", "tried_profiles", `want ["openai:a"]`, `got  ["openai:b"]`}},
			{`{lastUsed: "+0s"}`, `{lastUsed: none}`, []string{"end of run: profile openai:a lastUsed", "want none", "got  +0s"}},
		}},
		{name: "remove_profile clears the pin at the next turn", config: openaiFirst, body: `script:
  - at: "+0s"
    command: {do: pin, session: s, profile: "openai:a"}
  - at: "+1s"
    command: {do: remove_profile, profile: "openai:a"}
  - at: "+2s"
    turn:
      id: after
      session: s
      responses: [{candidate: openai/gpt-5, ok: true}]
      expect: {tried_profiles: ["openai:b"], session: {pin: "openai:b", pin_source: auto}}
`, wrong: []wrongExpect{
			{`session: {pin: "openai:b"`, `session: {pin: "openai:a"`, []string{"turn after", "session pin", `want "openai:a"`, `got  "openai:b"`}},
		}},
		{name: "restart keeps what the ledger holds", config: openaiFirst, body: `script:
  - at: "+0s"
    turn:
      id: before
      session: s
      responses:
        - {candidate: openai/gpt-5, profile: "openai:a", vector: RE-017, error: ` + authErr + `}
        - {candidate: openai/gpt-5, profile: "openai:b", ok: true}
  - at: "+5s"
    command: {do: restart}
  - at: "+10s"
    turn:
      id: after-restart
      session: s
      responses: [{candidate: openai/gpt-5, ok: true}]
      expect:
        tried_profiles: ["openai:b"]
        session: {pin: "openai:b"}
        profiles: {"openai:a": {cooldownUntil: "+30s"}}
`, wrong: []wrongExpect{
			{`cooldownUntil: "+30s"`, `cooldownUntil: none`, []string{"turn after-restart", "profile openai:a cooldownUntil", "want none", "got  +30s"}},
		}},
		{name: "sessions_reset clears an automatic pin", config: openaiFirst, body: `script:
  - at: "+0s"
    turn: {id: t, session: s, responses: [{candidate: openai/gpt-5, ok: true}], expect: {session: {pin: "openai:a"}}}
  - at: "+1s"
    command: {do: sessions_reset, session: s}
expect:
  sessions:
    s: {pin: none}
`, wrong: []wrongExpect{
			{`s: {pin: none}`, `s: {pin: "openai:a"}`, []string{"end of run: session s pin", `want "openai:a"`, "got  (none)"}},
		}},
	})
}
