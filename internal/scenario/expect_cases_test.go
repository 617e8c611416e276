package scenario

import (
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// Each new turn and end-of-run expectation passes on what the engine does,
// and a wrong value fails with one mismatch naming the turn, the field,
// want and got; none expects a field absent.
func TestCheck_NewExpectations(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "rotation: tried profiles, kinds, chain, answer time, session", config: openaiFirst, body: `script:
  - at: "+0s"
    turn:
      id: rot
      session: s
      responses:
        - {candidate: openai/gpt-5, profile: "openai:a", vector: RE-017, latency_ms: 100, error: ` + authErr + `}
        - {candidate: openai/gpt-5, profile: "openai:b", ok: true, latency_ms: 400}
      expect:
        chain: [openai/gpt-5, anthropic/claude-sonnet-4-5]
        tried_candidates: [openai/gpt-5, openai/gpt-5]
        tried_profiles: ["openai:a", "openai:b"]
        attempt_kinds: [first, rotation]
        answered_at: "+0.5s"
        skips: []
        session: {model: none, pin: "openai:b", pin_source: auto, notice_active: none}
        profiles:
          "openai:a": {cooldownReason: auth, cooldownModel: none}
`, wrong: []wrongExpect{
			{`chain: [openai/gpt-5, anthropic/claude-sonnet-4-5]`, `chain: [openai/gpt-5]`,
				[]string{"script[0] turn rot (+0s): chain", `want ["openai/gpt-5"]`, `got  ["openai/gpt-5", "anthropic/claude-sonnet-4-5"]`}},
			{`tried_candidates: [openai/gpt-5, openai/gpt-5]`, `tried_candidates: [openai/gpt-5, anthropic/claude-sonnet-4-5]`,
				[]string{"turn rot", "tried_candidates", `want ["openai/gpt-5", "anthropic/claude-sonnet-4-5"]`, `got  ["openai/gpt-5", "openai/gpt-5"]`}},
			{`tried_profiles: ["openai:a", "openai:b"]`, `tried_profiles: ["openai:b", "openai:a"]`,
				[]string{"turn rot", "tried_profiles", `want ["openai:b", "openai:a"]`, `got  ["openai:a", "openai:b"]`}},
			{`attempt_kinds: [first, rotation]`, `attempt_kinds: [first, retry]`,
				[]string{"turn rot", "attempt_kinds", `want ["first", "retry"]`, `got  ["first", "rotation"]`}},
			{`answered_at: "+0.5s"`, `answered_at: "+1s"`,
				[]string{"turn rot", "answered_at", "want +1s (2026-03-02T09:00:01Z)", "got  +500ms (2026-03-02T09:00:00.5Z)"}},
			{`answered_at: "+0.5s"`, `answered_at: none`, []string{"turn rot", "answered_at", "want none", "got  +500ms"}},
			{`skips: []`, `skips: ["openai/gpt-5: Provider openai is in cooldown"]`,
				[]string{"turn rot", "skips", `want ["openai/gpt-5: Provider openai is in cooldown"]`, "got  []"}},
			{`pin: "openai:b"`, `pin: "openai:a"`, []string{"turn rot", "session pin", `want "openai:a"`, `got  "openai:b"`}},
			{`pin: "openai:b"`, `pin: none`, []string{"turn rot", "session pin", "want (none)", `got  "openai:b"`}},
			{`pin_source: auto`, `pin_source: user`, []string{"turn rot", "session pin_source", `want "user"`, `got  "auto"`}},
			{`model: none`, `model: openai/gpt-5`, []string{"turn rot", "session model", `want "openai/gpt-5"`, "got  (none)"}},
			{`cooldownModel: none`, `cooldownModel: gpt-5`,
				[]string{"turn rot", "after the turn: profile openai:a cooldownModel", `want "gpt-5"`, "got  (none)"}},
		}},
		{name: "exhausted: nobody answered, skips, soonest expiry", config: anthropicFirst, body: `script:
  - at: "+0s"
    turn:
      id: disabled
      session: s
      responses:
        - {candidate: anthropic/claude-sonnet-4-5, vector: RE-017, error: ` + authErr + `, repeat: 2}
        - {candidate: openai/gpt-5, vector: RE-043, latency_ms: 200, error: ` + billingErr + `, repeat: 2}
      expect:
        outcome: exhausted
        answered_by: none
        profile: none
        answered_at: none
        tried_profiles: [none, "openai:a", "openai:b"]
        soonest_cooldown_expiry: "+10m0.2s"
  - at: "+1m"
    turn:
      id: skipped
      session: s
      responses:
        - {candidate: anthropic/claude-sonnet-4-5, vector: RE-017, error: ` + authErr + `}
      expect:
        tried_candidates: [anthropic/claude-sonnet-4-5]
        skips: ["openai/gpt-5: Provider openai is in cooldown"]
`, wrong: []wrongExpect{
			{`answered_by: none`, `answered_by: openai/gpt-5`, []string{"turn disabled", "answered_by", `want "openai/gpt-5"`, "got  (none)"}},
			{`profile: none`, `profile: "openai:a"`, []string{"turn disabled", "profile", `want "openai:a"`, "got  (none)"}},
			{`answered_at: none`, `answered_at: "+1s"`, []string{"turn disabled", "answered_at", "want +1s", "got  none"}},
			{`tried_profiles: [none, "openai:a", "openai:b"]`, `tried_profiles: ["openai:a", "openai:b"]`,
				[]string{"turn disabled", "tried_profiles", `want ["openai:a", "openai:b"]`, `got  ["none", "openai:a", "openai:b"]`}},
			{`soonest_cooldown_expiry: "+10m0.2s"`, `soonest_cooldown_expiry: none`,
				[]string{"turn disabled", "soonest_cooldown_expiry", "want none", "got  +10m0.2s (2026-03-02T09:10:00.2Z)"}},
			{`skips: ["openai/gpt-5: Provider openai is in cooldown"]`, `skips: []`,
				[]string{"script[1] turn skipped (+1m)", "skips", "want []", `got  ["openai/gpt-5: Provider openai is in cooldown"]`}},
		}},
		{name: "auto override with origin: the origin is tried first", config: openaiFirst, body: `script:
  - at: "+0s"
    command: {do: model, session: s, model: anthropic/claude-sonnet-4-5, source: auto, origin: openai/gpt-5}
  - at: "+1s"
    turn:
      id: origin-probe
      session: s
      responses: [{candidate: openai/gpt-5, ok: true}]
      expect:
        chain: [openai/gpt-5, anthropic/claude-sonnet-4-5]
        tried_candidates: [openai/gpt-5]
        session: {model: none, source: none, origin: none}
expect:
  sessions:
    s: {model: none}
`, wrong: []wrongExpect{
			{`chain: [openai/gpt-5, anthropic/claude-sonnet-4-5]`, `chain: [anthropic/claude-sonnet-4-5, openai/gpt-5]`,
				[]string{"turn origin-probe", "chain", `want ["anthropic/claude-sonnet-4-5", "openai/gpt-5"]`, `got  ["openai/gpt-5", "anthropic/claude-sonnet-4-5"]`}},
		}},
		{name: "stopped: the provider's message, no summary", config: anthropicFirst, body: `script:
  - at: "+0s"
    turn:
      id: unrecognised
      session: s
      responses:
        - {candidate: anthropic/claude-sonnet-4-5, vector: RE-003, error: ` + overloadErr + `, repeat: 4}
        - {candidate: openai/gpt-5, vector: RE-156, error: {message: 'Local model is unavailable.'}}
      expect:
        outcome: stopped
        reason: unclassified
        message: "Local model is unavailable."
        summary: none
`, wrong: []wrongExpect{
			{`message: "Local model is unavailable."`, `message: "Local model is down."`,
				[]string{"turn unrecognised", "message", `want "Local model is down."`, `got  "Local model is unavailable."`}},
			{`message: "Local model is unavailable."`, `message: none`,
				[]string{"turn unrecognised", "message", "want (none)", `got  "Local model is unavailable."`}},
		}},
		{name: "end of run: sessions", config: openaiFirst, body: `script:
  - at: "+0s"
    turn: {id: t, session: s, responses: [{candidate: openai/gpt-5, ok: true}]}
expect:
  sessions:
    s: {pin: "openai:a", pin_source: auto, model: none, source: none}
    never-used: {pin: none, notice_active: none}
`, wrong: []wrongExpect{
			{`s: {pin: "openai:a"`, `s: {pin: "openai:b"`, []string{"end of run: session s pin", `want "openai:b"`, `got  "openai:a"`}},
			{`never-used: {pin: none`, `never-used: {pin: "openai:a"`, []string{"end of run: session never-used pin", `want "openai:a"`, "got  (none)"}},
		}},
	})
}

// null leaves a field unchecked, as a key left out does (files written
// before none meant absent keep their meaning): openai/gpt-5 answered with
// openai:a, whose cooldownModel is empty.
func TestCheck_NullIsUnchecked(t *testing.T) {
	ms := runChecked(t, testutil.Store(t), caseHead+openaiFirst+`script:
  - at: "+0s"
    turn:
      session: s
      responses: [{candidate: openai/gpt-5, ok: true}]
      expect: {answered_by: ~, profile: null, answered_at: null, tried_profiles: null, session: {pin: null}, profiles: {"openai:a": {cooldownModel: null}}}
`)
	if len(ms) > 0 {
		t.Fatalf("null was checked: %v", ms)
	}
}
