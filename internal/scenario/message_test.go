package scenario

import "testing"

// message checks the provider's error a stopped turn surfaces as it is
// (a format error stops the turn; summary is then none), and none says a
// turn surfaced none; a wrong value fails with one mismatch naming the
// turn, message, want and got.
func TestCheck_MessageOfAStoppedTurn(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "a format error stops the turn with the provider's error", config: openaiFirst, body: `script:
  - at: "+0s"
    turn:
      id: format
      session: s
      responses:
        - {candidate: openai/gpt-5, vector: RE-006, error: {status: 400, type: invalid_request_error, message: "messages.1.content: tool_use ids must be unique"}}
      expect:
        outcome: stopped
        disposition: failover
        reason: format
        summary: none
        message: "messages.1.content: tool_use ids must be unique"
  - at: "+1m"
    turn:
      id: ok
      session: s
      responses: [{candidate: openai/gpt-5, ok: true}]
      expect: {outcome: succeeded, message: none}
`, wrong: []wrongExpect{
			{"\n        message: \"messages.1.content: tool_use ids must be unique\"", "\n        message: \"tool_use ids must be unique\"",
				[]string{"turn format", "message", `want "tool_use ids must be unique"`, `got  "messages.1.content: tool_use ids must be unique"`}},
			{"\n        message: \"messages.1.content: tool_use ids must be unique\"", "\n        message: none",
				[]string{"turn format", "message", "want (none)", `got  "messages.1.content: tool_use ids must be unique"`}},
			{`{outcome: succeeded, message: none}`, `{outcome: succeeded, message: "x"}`,
				[]string{"turn ok", "message", `want "x"`, "got  (none)"}},
		}},
	})
}
