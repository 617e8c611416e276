package config_test

import (
	"testing"

	"github.com/fledger/fledger/commands/config"
)

// A configured model is called by its whole name, so a primary or
// fallback written with a profile pin ("openai/gpt-5@openai:a") would ask
// for model "gpt-5@openai:a": a file is refused, naming how to pin a
// profile instead. An '@' the engine does not split (a Vertex version,
// Cloudflare's @cf/) stays part of the model; a stored config is read as
// it was.
func TestParse_ConfiguredModelTakesNoProfile(t *testing.T) {
	const prof = `auth: {profiles: {"openai:a": {provider: openai, type: api_key}}}` + "\n"
	cases := []struct {
		name, text string
		want       []string // nil: valid
	}{
		{"primary (c9)", prof + "agents: {defaults: {model: {primary: openai/gpt-5@openai:a}}}",
			[]string{`agents.defaults.model.primary: "openai/gpt-5@openai:a" names auth profile "openai:a" after its @; a configured model takes no @profile (it would be called as model "gpt-5@openai:a"): put the profile first in auth.order.openai, or pin it per session with /model openai/gpt-5@openai:a`}},
		{"fallback with an e-mail profile", "agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-opus-4-6, \"openai-codex/gpt-5@openai-codex:me@x.io\"]}}}",
			[]string{`agents.defaults.model.fallbacks[1]: "openai-codex/gpt-5@openai-codex:me@x.io" names auth profile "openai-codex:me@x.io" after its @; a configured model takes no @profile (it would be called as model "gpt-5@openai-codex:me@x.io"): put the profile first in auth.order.openai-codex, or pin it per session with /model openai-codex/gpt-5@openai-codex:me@x.io`}},
		{"agent entry string", "agents: {entries: {coder: {model: \"vertex/claude-3-5-sonnet@20240620@vertex:work\"}}}",
			[]string{`agents.entries.coder.model: "vertex/claude-3-5-sonnet@20240620@vertex:work" names auth profile "vertex:work" after its @; a configured model takes no @profile (it would be called as model "claude-3-5-sonnet@20240620@vertex:work"): put the profile first in auth.order.vertex, or pin it per session with /model vertex/claude-3-5-sonnet@20240620@vertex:work`}},
		{"agent entry object", "agents: {entries: {coder: {model: {primary: openai/gpt-5, fallbacks: [\"groq/llama@groq:default\"]}}}}",
			[]string{`agents.entries.coder.model.fallbacks[0]: "groq/llama@groq:default" names auth profile "groq:default" after its @; a configured model takes no @profile (it would be called as model "llama@groq:default"): put the profile first in auth.order.groq, or pin it per session with /model groq/llama@groq:default`}},
		{"vertex version", "agents: {defaults: {model: {primary: vertex/claude-3-5-sonnet@20240620}}}", nil},
		{"cloudflare @cf", "agents: {defaults: {model: {primary: cloudflare/@cf/meta/llama-3-8b-instruct}}}", nil},
		{"@ then a slash", "agents: {defaults: {model: {primary: openrouter/meta/llama@free/x:y}}}", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				mustParse(t, tc.text)
				return
			}
			wantProblems(t, tc.text, tc.want)
		})
	}
	// History is forever: a config stored with such a model reads back
	// with the model as it was named.
	l, err := config.Parse([]byte(`{"agents":{"defaults":{"model":{"primary":"openai/gpt-5@openai:a"}}}}`), "ConfigApplied", config.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Policy.Defaults.Primary.Model; got != "gpt-5@openai:a" {
		t.Fatalf("stored primary model %q, want gpt-5@openai:a", got)
	}
}

// ProfileSuffixAt is the split engine.ParseModelSelection makes.
func TestProfileSuffixAt(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"openai/gpt-5@openai:backup", 12},
		{"openai-codex/gpt-5@openai-codex:me@x.io", 18},
		{"vertex/claude-3-5-sonnet@20240620", -1},
		{"vertex/claude-3-5-sonnet@20240620@vertex:work", 33},
		{"cloudflare/@cf/meta/llama-3-8b-instruct", -1},
		{"openai@openai:a", -1}, // no '/': not provider/model
		{"openai/gpt-5@", -1},
		{"openai/gpt-5@:x", -1},
	} {
		if got := config.ProfileSuffixAt(c.s); got != c.want {
			t.Errorf("ProfileSuffixAt(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}
