package config_test

import (
	"testing"

	"github.com/fledger/fledger/commands/config"
)

// A config file is one YAML document: the reader takes only the first, so
// a second one (even one that does not parse) is refused, naming where it
// starts; a leading "---" and a trailing "---" or "..." are fine.
func TestParse_OneDocument(t *testing.T) {
	const cfg = "agents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n"
	cases := []struct {
		name, text string
		want       []string // nil: valid, with cfg's primary
	}{
		{"plain", cfg, nil},
		{"leading ---", "---\n" + cfg, nil},
		{"leading --- after a comment and a directive", "# failover\n%YAML 1.1\n---\n" + cfg, nil},
		{"trailing ---", cfg + "---\n", nil},
		{"trailing ...", cfg + "...\n", nil},
		{"trailing --- then a comment", cfg + "--- # end\n# nothing more\n\n", nil},
		{"leading and trailing ---, CRLF", "---\r\n" + "agents:\r\n  defaults:\r\n    model:\r\n      primary: openai/gpt-5\r\n" + "---\r\n", nil},
		{"--- in a comment is no marker", cfg + "# ---\n", nil},
		{"empty document first (c10)", "---\nagents: {}\n---\n" + cfg,
			[]string{"holds 2 YAML documents; a config is one document (the second starts at line 3)"}},
		{"second does not parse (c11)", cfg + "---\n{{{ not yaml at all\n",
			[]string{"holds 2 YAML documents; a config is one document (the second starts at line 5)"}},
		{"two empty markers then the config", "---\n---\n" + cfg,
			[]string{"holds 2 YAML documents; a config is one document (the second starts at line 2)"}},
		{"content on the marker line", cfg + "--- {retry: {provider: {maxRetries: 1}}}\n",
			[]string{"holds 2 YAML documents; a config is one document (the second starts at line 5)"}},
		{"text after ... without ---", cfg + "...\n\n# more\nretry: {}\n",
			[]string{"holds 2 YAML documents; a config is one document (the second starts at line 8)"}},
		{"an empty second, a third with content", cfg + "---\n---\nretry: {}\n",
			[]string{"holds 3 YAML documents; a config is one document (the third starts at line 6)"}},
		// JSON values one after the other, or text after one, with no
		// "---": the reader took the first and dropped the rest.
		{"JSON, a comment and blank lines after", `{"agents":{"defaults":{"model":{"primary":"openai/gpt-5"}}}}` + "\n\n# end\n", nil},
		{"a second JSON object", `{"agents":{"defaults":{"model":{"primary":"openai/gpt-5"}}}}` + "\n" + `{"agents":{"defaults":{"model":{"primary":"groq/x"}}}}` + "\n",
			[]string{"has more after its first value, from line 2: a config is one mapping (the reader would drop the rest)"}},
		{"text after JSON on its line", `{"agents":{"defaults":{"model":{"primary":"openai/gpt-5"}}}} garbage [[[`,
			[]string{"has more after its first value, from line 1: a config is one mapping (the reader would drop the rest)"}},
		{"a JSON object over lines, then another", "{\"agents\":\n {\"defaults\":{\"model\":{\"primary\":\"openai/gpt-5\"}}}\n}\n\n{\"retry\": {}}\n",
			[]string{"has more after its first value, from line 5: a config is one mapping (the reader would drop the rest)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				l := mustParse(t, tc.text)
				if got := l.Policy.Defaults.Primary.String(); got != "openai/gpt-5" {
					t.Fatalf("primary %q, want openai/gpt-5", got)
				}
				return
			}
			wantProblems(t, tc.text, tc.want)
		})
	}
}

// A stored config is canonical JSON and read as it was: the document
// rule is a file's.
func TestParse_StoredConfigIsNotHeldToTheDocumentRule(t *testing.T) {
	if _, err := config.Parse([]byte("{}\n---\n"), "ConfigApplied", config.Stored()); err != nil {
		t.Fatal(err)
	}
}
