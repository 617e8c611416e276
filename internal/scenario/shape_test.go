package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseProblems parses text and returns its problems as "path: msg"
// (nil when it parses).
func parseProblems(t *testing.T, text, source string) []string {
	t.Helper()
	_, err := Parse([]byte(text), source)
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: %v is not a ValidationError", source, err)
	}
	out := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		out[i] = p.String()
	}
	return out
}

// A bad-input file is refused with every problem at its full path: each
// unknown key (not only the first), a wrong-case key as an unknown field
// with a hint, a type error in the file's own terms, a null list entry.
func TestParse_ShapeProblemsHaveFullPaths(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"b02-unknown-expect-key.yaml", []string{`script[0].turn.expect.outcom: unknown field "outcom"; did you mean "outcome"?`}},
		{"b03-wrong-type-latency.yaml", []string{`script[0].turn.responses[0].latency_ms: want an integer, got a string ("fast")`}},
		{"b04-wrong-type-attempts.yaml", []string{`script[0].turn.expect.attempts: want an integer, got a string ("two")`}},
		{"b20-fallbacks-string.yaml", []string{`script[0].turn.fallbacks: want a list, got a string ("anthropic/claude-opus-4-6")`}},
		{"b22-null-in-list.yaml", []string{"script[0].turn.expect.tried_profiles[0]: is null (~), which a list entry cannot be: write none for an absent value"}},
		{"b23-unknown-session-key.yaml", []string{`script[0].turn.expect.session.pinn: unknown field "pinn"; did you mean "pin"?`}},
		{"b24b-unknown-profile-fields.yaml", []string{
			`script[0].turn.expect.profiles.openai:a.bogus: unknown field "bogus"`,
			`script[0].turn.expect.profiles.openai:a.cooldownUntill: unknown field "cooldownUntill"; did you mean "cooldownUntil"?`,
			`script[0].turn.expect.profiles.openai:a.errorcount: unknown field "errorcount" (keys are case-sensitive); did you mean "errorCount"?`,
			`expect.profiles.openai:a.lastUsedd: unknown field "lastUsedd"; did you mean "lastUsed"?`,
			`expect.sessions.s.pinn: unknown field "pinn"; did you mean "pin"?`}},
		{"b24d-case-insensitive.yaml", []string{
			`script[0].turn.expect.ANSWERED_BY: unknown field "ANSWERED_BY" (keys are case-sensitive); did you mean "answered_by"?`,
			`script[0].turn.expect.profiles.openai:a.errorcount: unknown field "errorcount" (keys are case-sensitive); did you mean "errorCount"?`}},
		{"b25-typo-responses.yaml", []string{`script[0].turn.repsonses: unknown field "repsonses"; did you mean "responses"?`}},
		{"b28-unknown.yaml", []string{`script[0].turn.expect.cooldown: unknown field "cooldown"`}},
		{"b39-json-type.json", []string{`script[1].turn.responses[0].latency_ms: want an integer, got a string ("x")`}},
	} {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := parseProblems(t, string(raw), c.file); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// The shape rules on inline cases: exact keys at every level (the top
// too), integers that are not whole, booleans, mappings and lists, null
// entries of any list, a cap on one step's problems; a null that is not a
// list entry still leaves its field unset.
func TestParse_ShapeRules(t *testing.T) {
	step := func(s string) string { return caseHead + openaiFirst + "script:\n  - " + s + "\n" }
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf("zz%02d: 1", i))
	}
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"wrong-case top-level key", strings.Replace(step(`{at: "+0s", turn: {session: s}}`), "name:", "Name:", 1),
			[]string{`Name: unknown field "Name" (keys are case-sensitive); did you mean "name"?`}},
		{"wrong-case step key", step(`{AT: "+0s", turn: {session: s}}`), []string{`script[0].AT: unknown field "AT" (keys are case-sensitive); did you mean "at"?`}},
		{"repeat not whole", step(`{at: "+0s", turn: {session: s, responses: [{candidate: openai/gpt-5, ok: true, repeat: 1.5}]}}`),
			[]string{"script[0].turn.responses[0].repeat: want an integer, got 1.5"}},
		{"ok not a boolean", step(`{at: "+0s", turn: {session: s, responses: [{candidate: openai/gpt-5, ok: "yes"}]}}`),
			[]string{`script[0].turn.responses[0].ok: want true or false, got a string ("yes")`}},
		{"expect a list", step(`{at: "+0s", turn: {session: s, expect: [outcome]}}`), []string{"script[0].turn.expect: want a mapping, got a list"}},
		{"failureCounts value", step(`{at: "+0s", turn: {session: s, expect: {profiles: {"openai:a": {failureCounts: {auth: one}}}}}}`),
			[]string{`script[0].turn.expect.profiles.openai:a.failureCounts.auth: want an integer, got a string ("one")`}},
		{"null step", caseHead + openaiFirst + "script: [~]\n", []string{"script[0]: is null (~), which a list entry cannot be: write none for an absent value"}},
		{"null in chain", step(`{at: "+0s", turn: {session: s, expect: {chain: [openai/gpt-5, ~]}}}`),
			[]string{"script[0].turn.expect.chain[1]: is null (~), which a list entry cannot be: write none for an absent value"}},
		{"capped", step(`{at: "+0s", turn: {session: s, expect: {` + strings.Join(many, ", ") + `}}}`),
			append(func() []string {
				var w []string
				for i := range 20 {
					w = append(w, fmt.Sprintf(`script[0].turn.expect.zz%02d: unknown field "zz%02d"`, i, i))
				}
				return w
			}(), "script[0]: … and 5 more problems")},
		{"null fields are unset", step(`{at: "+0s", turn: {session: s, responses: ~, expect: {profiles: {"openai:a": ~}, attempts: ~}}}`), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := parseProblems(t, c.text, "case"); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}
