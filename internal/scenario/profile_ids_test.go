package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every profile id a step names is checked against the config in force at
// parse time, with its path, instead of failing at run time after the
// steps before it ran: pin, model …@profile, auth_order, a response's
// profile, use, remove_profile, and the profiles an expectation names.
func TestParse_ProfileIDsCheckedAgainstTheConfig(t *testing.T) {
	const two = `(profiles: anthropic:w, openai:a)`
	for _, c := range []struct {
		name, file, text string
		turn             bool
		want             []string
	}{
		{name: "pin dotted", file: "b08-pin-dotted.yaml",
			want: []string{`script[0].command.profile: unknown auth profile "openai.a" ` + two + `; did you mean "openai:a"?`}},
		{name: "use wildcard", file: "b09-use-wildcard.yaml",
			want: []string{`script[0].command.profile: unknown auth profile "openai:*" ` + two + `; a step names one profile exactly, not a pattern`}},
		{name: "expectation of an unknown profile", file: "b11-unknown-profile-expect.yaml",
			want: []string{`script[0].turn.expect.profiles.openai:zz: unknown auth profile "openai:zz" ` + two}},
		{name: "remove twice", file: "b15-remove-twice.yaml",
			want: []string{`script[1].command.profile: unknown auth profile "openai:a" (profiles: anthropic:w); script[0] removed it`}},
		{name: "order with another provider's profile", file: "b21-order-other-provider.yaml",
			want: []string{`script[0].command.profiles[1]: auth profile "anthropic:w" is of provider anthropic, not openai`}},
		{name: "model wildcard profile", file: "b33-model-wildcard-profile.yaml",
			want: []string{`script[0].command.model: unknown auth profile "openai:*" ` + two + `; a step names one profile exactly, not a pattern`}},
		{name: "model dotted profile", file: "b34-model-dotted-profile.yaml",
			want: []string{`script[0].command.model: unknown auth profile "open.ai:a" ` + two + `; did you mean "openai:a"?`}},
		{name: "model with another provider's profile", text: `{do: model, session: s, model: "anthropic/claude-sonnet-4-5@openai:a"}`,
			want: []string{`script[0].command.model: auth profile "openai:a" is of provider openai, not anthropic`}},
		{name: "auto pin unknown", text: `{do: pin, session: s, profile: "openai:c", source: auto}`,
			want: []string{`script[0].command.profile: unknown auth profile "openai:c" (profiles: openai:a, openai:b)`}},
		{name: "order unknown and twice", text: `{do: auth_order, provider: openai, profiles: ["openai:b", "OpenAI:A", "openai:b"]}`,
			want: []string{`script[0].command.profiles[1]: unknown auth profile "OpenAI:A" (profiles: openai:a, openai:b); did you mean "openai:a"?`,
				`script[0].command.profiles[2]: "openai:b" is listed twice (also at profiles[0])`}},
		{name: "order of a provider with no profile", text: `{do: auth_order, provider: anthropic, profiles: ["openai:a"]}`,
			want: []string{`script[0].command.provider: provider "anthropic" has no configured profile (configured providers: openai)`}},
		{name: "clearing an order is not checked against profiles", text: `{do: auth_order, provider: openai}`},
		{name: "response for an unknown profile", turn: true,
			text: `{session: s, responses: [{candidate: openai/gpt-5, profile: "openai:c", ok: true}]}`,
			want: []string{`script[0].turn.responses[0].profile: unknown auth profile "openai:c" (profiles: openai:a, openai:b)`}},
		{name: "response for another provider's profile", turn: true,
			text: `{session: s, responses: [{candidate: anthropic/claude-sonnet-4-5, profile: "openai:a", ok: true}]}`,
			want: []string{`script[0].turn.responses[0].profile: auth profile "openai:a" is of provider openai, not anthropic`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := c.text
			if c.file != "" {
				raw, err := os.ReadFile(filepath.Join("testdata", c.file))
				if err != nil {
					t.Fatal(err)
				}
				text = string(raw)
			} else {
				kind := "command"
				if c.turn {
					kind = "turn"
				}
				text = caseHead + openaiFirst + "script:\n  - at: \"+0s\"\n    " + kind + ": " + c.text + "\n"
			}
			if got := parseProblems(t, text, "case"); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
