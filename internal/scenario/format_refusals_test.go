package scenario

import (
	"errors"
	"strings"
	"testing"
)

// A new field or step used wrongly is refused by Parse with its path, and
// by the schema wherever the schema can tell (it cannot know the config's
// profiles or the turn ids).
func TestParse_NewFieldsRefusedWithPaths(t *testing.T) {
	turn := func(extra string) string {
		return "script:\n  - at: \"+0s\"\n    turn: {session: s, responses: [{candidate: openai/gpt-5, ok: true}]" + extra + "}\n"
	}
	cmd := func(c string) string { return "script:\n  - at: \"+0s\"\n    command: " + c + "\n" }
	schema := scenarioSchema(t)
	for _, c := range []struct {
		name, body, problem string
		schemaToo           bool
	}{
		{"fallbacks without cron", turn(`, model: openai/gpt-5, fallbacks: []`),
			"script[0].turn.fallbacks: is a cron payload's payload.fallbacks: it needs a model with source: cron", true},
		{"fallback not provider/model", turn(`, model: openai/gpt-5, source: cron, fallbacks: [gemini]`),
			`script[0].turn.fallbacks[0]: "gemini" is not provider/model`, true},
		{"fallbacks_override beside a cron payload's fallbacks", turn(`, model: openai/gpt-5, source: cron, fallbacks: [], fallbacks_override: []`),
			"script[0].turn.fallbacks_override: and fallbacks both given: a cron payload's fallbacks are its override; write one", true},
		{"fallbacks_override entry not provider/model", turn(`, fallbacks_override: [gemini]`),
			`script[0].turn.fallbacks_override[0]: "gemini" is not provider/model`, true},
		{"fallbacks_override entry with an @profile", turn(`, fallbacks_override: ["openai/gpt-5@openai:a"]`),
			`script[0].turn.fallbacks_override[0]: "openai/gpt-5@openai:a": a fallback takes no @profile`, true},
		{"fallbacks_override entry with white space", turn(`, fallbacks_override: [" openai/gpt-5"]`),
			`script[0].turn.fallbacks_override[0]: model " openai/gpt-5": provider " openai" contains whitespace or control characters`, true},
		{"wildcard agent", turn(`, agent: "*"`), `script[0].turn.agent: "*" contains a wildcard (* or >); name one agent id exactly`, false},
		{"wildcard model", turn(`, model: "*/>"`), `model "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`, false},
		{"cron fallbacks entry with an @profile", turn(`, model: openai/gpt-5, source: cron, fallbacks: ["anthropic/claude-opus-4-6@anthropic:a"]`),
			`script[0].turn.fallbacks[0]: "anthropic/claude-opus-4-6@anthropic:a": a fallback takes no @profile`, true},
		{"during on the default response", "default: {candidate: openai/gpt-5, ok: true, during: {do: new}}\n" + turn(``),
			"default.during: only a turn's own response can have during", false},
		{"output_started on an answer", "script:\n  - at: \"+0s\"\n    turn: {session: s, responses: [{candidate: openai/gpt-5, ok: true, output_started: true}]}\n",
			"script[0].turn.responses[0]: output_started, tool_started and tool_batch_settled describe an error", true},
		{"unknown attempt kind", turn(`, expect: {attempt_kinds: [first, retyr]}`),
			`script[0].turn.expect.attempt_kinds[1]: "retyr" is not first|retry|rotation|fallback|probe|chain_retry`, true},
		{"tried candidate not provider/model", turn(`, expect: {tried_candidates: [gpt-5]}`),
			`script[0].turn.expect.tried_candidates[0]: "gpt-5" is not provider/model`, true},
		{"chain entry not provider/model", turn(`, expect: {chain: [gpt-5]}`), `script[0].turn.expect.chain[0]: "gpt-5" is not provider/model`, true},
		{"answered_by neither a model nor none", turn(`, expect: {answered_by: nobody}`), `script[0].turn.expect.answered_by: "nobody" is not provider/model`, true},
		{"answered_at not a time", turn(`, expect: {answered_at: soon}`), `script[0].turn.expect.answered_at: "soon" is not +<duration>, RFC 3339 or none`, true},
		{"soonest expiry not a time", turn(`, expect: {soonest_cooldown_expiry: later}`),
			`script[0].turn.expect.soonest_cooldown_expiry: "later" is not +<duration>, RFC 3339 or none`, true},
		{"session source", turn(`, expect: {session: {source: manual}}`), `script[0].turn.expect.session.source: "manual" is not user|default|auto|legacy|cron|none`, true},
		{"end-of-run pin source", turn(``) + "expect: {sessions: {s: {pin_source: admin}}}\n", `expect.sessions.s.pin_source: "admin" is not auto|user|none`, true},
		{"unknown session field", turn(`, expect: {session: {pinned: "openai:a"}}`), `unknown field "pinned"`, true},
		{"blockedUntil not a time", turn(`, expect: {profiles: {"openai:a": {blockedUntil: tomorrow}}}`),
			`script[0].turn.expect.profiles.openai:a.blockedUntil: "tomorrow" is not +<duration>, RFC 3339 or none`, true},
		{"a session's cron model", cmd(`{do: model, session: s, model: openai/gpt-5, source: cron}`),
			"script[0].command.source: cron is not a session's selection: a cron model applies to one turn only; write it on the turn (model and source: cron)", false},
		{"a session's unknown source", cmd(`{do: model, session: s, model: openai/gpt-5, source: manual}`),
			`script[0].command.source: "manual" is not user|default|auto|legacy`, false},
		{"use without profile", cmd(`{do: use}`), "script[0].command.profile: is required", true},
		{"use with a session", cmd(`{do: use, profile: "openai:a", session: s}`), "script[0].command.session: is not taken", true},
		{"use of an unknown profile", cmd(`{do: use, profile: "openai:z"}`), `script[0].command.profile: unknown auth profile "openai:z" (profiles: openai:a, openai:b)`, false},
		{"use on another provider's model", cmd(`{do: use, profile: "openai:a", model: anthropic/claude-sonnet-4-5}`),
			`script[0].command.model: "anthropic/claude-sonnet-4-5" is not of the profile's provider openai`, false},
		{"use of a removed profile", "script:\n  - at: \"+0s\"\n    command: {do: remove_profile, profile: \"openai:a\"}\n  - at: \"+1s\"\n    command: {do: use, profile: \"openai:a\"}\n",
			`script[1].command.profile: unknown auth profile "openai:a" (profiles: openai:b); script[0] removed it`, false},
		{"use taking a turn's id", cmd(`{do: use, profile: "openai:a"}`) + "  - at: \"+1s\"\n    turn: {id: t1, session: s, responses: [{candidate: openai/gpt-5, ok: true}]}\n",
			`script[1].turn.id: duplicate turn id "t1"`, false},
		{"remove_profile twice", cmd(`{do: remove_profile, profile: "openai:b"}`) + "  - at: \"+1s\"\n    command: {do: remove_profile, profile: \"openai:b\"}\n",
			`script[1].command.profile: unknown auth profile "openai:b" (profiles: openai:a); script[0] removed it`, false},
		{"remove_profile without profile", cmd(`{do: remove_profile}`), "script[0].command.profile: is required", true},
		{"sessions_reset without session", cmd(`{do: sessions_reset}`), "script[0].command.session: is required", true},
		{"origin without source auto", cmd(`{do: model, session: s, model: openai/gpt-5, origin: anthropic/claude-sonnet-4-5}`),
			"script[0].command.origin: is only taken with source auto", true},
		{"origin on another step", cmd(`{do: new, session: s, origin: anthropic/claude-sonnet-4-5}`), "script[0].command.origin: is only taken by do: model", true},
		{"a profile beside a model", cmd(`{do: model, session: s, model: openai/gpt-5, profile: "openai:b"}`),
			"script[0].command.profile: is not taken by do: model (a user pin goes with the model: model: openai/gpt-5@openai:b)", true},
		{"a model on /new", cmd(`{do: new, session: s, model: openai/gpt-5}`), "script[0].command.model: is not taken by do: new", true},
		{"profiles on a pin", cmd(`{do: pin, session: s, profile: "openai:a", profiles: ["openai:b"]}`), "script[0].command.profiles: is not taken by do: pin", true},
		{"a session on auth_order", cmd(`{do: auth_order, provider: openai, profiles: ["openai:b"], session: s}`), "script[0].command.session: is not taken by do: auth_order", true},
		{"origin not provider/model", cmd(`{do: model, session: s, model: openai/gpt-5, source: auto, origin: claude}`),
			`script[0].command.origin: "claude" is not provider/model`, true},
		{"restart with a session", cmd(`{do: restart, session: s}`), "script[0].command.session: is not taken: a restart step acts on the gateway", true},
		{"remove_profile with a session", cmd(`{do: remove_profile, profile: "openai:a", session: s}`), "script[0].command.session: is not taken", true},
		{"use with no model of the provider", strings.Replace(openaiFirst, `"openai:b": {provider: openai`, `"google-gemini:x": {provider: google-gemini`, 1) +
			cmd(`{do: use, profile: "google-gemini:x"}`), "script[0].command.model: is required: no configured default model is of provider google-gemini", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := caseHead + c.body
			if !strings.HasPrefix(c.body, "config:") {
				text = caseHead + openaiFirst + c.body
			}
			_, err := Parse([]byte(text), "case")
			if c.problem != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.problem) {
					t.Errorf("Parse: %v\nwant a problem %q", err, c.problem)
				}
			}
			if serr := schema.Validate(schemaDoc(t, text)); (serr != nil) != c.schemaToo {
				t.Errorf("schema: %v, want refused %v", serr, c.schemaToo)
			}
		})
	}
}

// Every new field and step parses into what the runner needs: a cron
// turn's fallbacks ([] distinct from absent), the response flags, a use
// step's seed session, default model and warm-up turn id, and the config a
// remove_profile step leaves in force.
func TestParse_NewFieldsAndSteps(t *testing.T) {
	sc, err := Parse([]byte(caseHead+openaiFirst+`script:
  - at: "+0s"
    turn: {id: strict, session: c, model: openai/gpt-5, source: cron, fallbacks: [], responses: [{candidate: openai/gpt-5, error: {status: 529}, output_started: true, tool_started: true}]}
  - at: "+1s"
    turn: {id: configured, session: c, model: openai/gpt-5, source: cron, responses: [{candidate: openai/gpt-5, ok: true}]}
  - at: "+2s"
    command: {do: use, profile: "openai:b"}
  - at: "+3s"
    command: {do: remove_profile, profile: "openai:a"}
  - at: "+4s"
    command: {do: restart}
  - at: "+5s"
    command: {do: sessions_reset, session: c}
`), "case")
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Script
	if fb := s[0].Turn.Fallbacks; fb == nil || len(*fb) != 0 {
		t.Errorf("fallbacks: [] parsed as %v, want an empty list", fb)
	}
	if s[1].Turn.Fallbacks != nil {
		t.Errorf("absent fallbacks parsed as %v, want nil", *s[1].Turn.Fallbacks)
	}
	if r := s[0].Turn.Responses[0]; !r.OutputStarted || !r.ToolStarted {
		t.Errorf("response flags %+v", r)
	}
	if u := s[2].Command; u.Session != "seed:openai:b" || u.Model != "openai/gpt-5" || u.TurnID() != "t3" {
		t.Errorf("use step: session %q, model %q, turn %q", u.Session, u.Model, u.TurnID())
	}
	cfg := s[3].Command.Config()
	if cfg == nil {
		t.Fatal("remove_profile has no config")
	}
	if _, ok := cfg.Policy.Profile("openai:a"); ok || len(cfg.Policy.Profiles) != 1 || cfg.Hash == sc.Loaded.Hash {
		t.Errorf("config after remove_profile: profiles %+v, hash %s (before %s)", cfg.Policy.Profiles, cfg.Hash, sc.Loaded.Hash)
	}
}
