package config_test

import (
	"testing"
)

// YAML merge keys work in a config file: a key written out overrides the
// merged one (it was refused as a key given twice, which the user did not
// write); a merge key after the keys of its mapping, which the reader
// would let override them, is refused, and a key really given twice still
// is.
func TestParse_YAMLMergeKeys(t *testing.T) {
	const base = "x-profile: &base {provider: openai, type: oauth}\n"
	cases := []struct {
		name, text string
		wantType   string   // the merged profile's type when valid
		want       []string // problems
	}{
		{"merge, a key overridden", "auth:\n  profiles:\n    \"openai:a\":\n      <<: &base {provider: openai, type: oauth}\n      type: api_key\n      inlineKey: true\n", "api_key", nil},
		{"merge without override", "auth:\n  profiles:\n    \"openai:a\": &p {provider: openai, type: token}\n    \"openai:b\": {<<: *p}\n", "token", nil},
		{"a list of merges, the first wins", "auth:\n  profiles:\n    \"openai:x\": &x {provider: openai, type: token}\n    \"openai:y\": &y {provider: openai, type: oauth}\n    \"openai:a\": {<<: [*y, *x]}\n", "oauth", nil},
		{"merge after a key", "auth:\n  profiles:\n    \"openai:z\": &z {provider: openai, type: token}\n    \"openai:a\":\n      type: api_key\n      <<: *z\n", "",
			[]string{`not valid YAML or JSON: line 6: a YAML merge key (<<) must come before the keys of its mapping (it follows "type", line 5), so that a key written out overrides the merged one`}},
		{"a key given twice beside a merge", "auth:\n  profiles:\n    \"openai:z\": &z {provider: openai, type: token}\n    \"openai:a\":\n      <<: *z\n      type: api_key\n      type: oauth\n", "",
			[]string{"not valid YAML or JSON: yaml: unmarshal errors:\n  line 7: key \"type\" already set in map"}},
		{"two merge keys in one mapping", "auth:\n  profiles:\n    \"openai:x\": &x {provider: openai, type: token}\n    \"openai:y\": &y {provider: openai, type: oauth}\n    \"openai:a\":\n      <<: *x\n      <<: *y\n", "",
			[]string{`not valid YAML or JSON: line 7: a second YAML merge key (<<) in one mapping; merge several with one: <<: [*first, *second] (the first wins)`}},
		{"a quoted << is a key, not a merge", "\"<<\": 1\n", "", []string{`["<<"]: unknown key`}},
		{"an unknown key at the top of the merge file", base + "auth:\n  profiles:\n    \"openai:a\": {<<: *base}\n", "",
			[]string{`x-profile: unknown key`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want != nil {
				wantProblems(t, tc.text, tc.want)
				return
			}
			l := mustParse(t, tc.text)
			p, ok := l.Policy.Profile("openai:a")
			if !ok || p.Type != tc.wantType || p.Provider != "openai" {
				t.Fatalf("profile openai:a = %+v (%v), want type %s", p, ok, tc.wantType)
			}
		})
	}
}
