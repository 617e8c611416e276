package engine

import (
	"fmt"
	"testing"

	"github.com/fledger/fledger/commands/config"
)

// What a config accepts as a model, `/model` and a begin select, and what
// a config refuses they refuse: a config's primary and a selection of the
// same text agree, for real provider model ids and for what names no
// model (white space, a wildcard, a trailing @).
func TestModelRef_ConfigAndSelectionAgree(t *testing.T) {
	for _, c := range []struct {
		ref string
		ok  bool
	}{
		{"fireworks/accounts/fireworks/models/llama-v3p1-405b-instruct", true},
		{"amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", true},
		{"google/models/gemini-1.5-pro", true},
		{"cloudflare/@cf/meta/llama-3-8b-instruct", true},
		{"openrouter/meta-llama/llama-3.1-8b-instruct:free", true},
		{"vertex/claude-3-5-sonnet@20240620", true},
		{"openai/gpt-5@nope", true},
		{"lmstudio/My Model.gguf", false},
		{"lmstudio/model\t.gguf", false},
		{"openai/gpt-*", false},
		{"openai/a>b", false},
		{"openai/gpt-5@", false},
	} {
		yaml := fmt.Sprintf("agents:\n  defaults:\n    model:\n      primary: %q\n", c.ref)
		_, cfgErr := config.Parse([]byte(yaml), "test")
		ref, profile, selErr := ParseModelSelection(c.ref)
		if (cfgErr == nil) != c.ok || (selErr == nil) != c.ok {
			t.Errorf("%q: config %v, selection %v; want both accepted = %v", c.ref, cfgErr, selErr, c.ok)
			continue
		}
		if c.ok && (ref.String() != c.ref || profile != "") {
			t.Errorf("%q: selected %q pinning %q; want the whole text as the model, no pin", c.ref, ref.String(), profile)
		}
	}
}
