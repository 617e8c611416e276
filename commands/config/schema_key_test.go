package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
)

// A top-level "$schema" (an editor's pointer to schemas/config.v1.json) is
// accepted and ignored: the same canonical form and hash as without it,
// no warning. One that is not a string is refused, naming the key.
func TestParse_SchemaKeyIgnored(t *testing.T) {
	const body = "agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-opus-4-6]}}}\n"
	plain, err := config.Parse([]byte(body), "plain")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"$schema: https://fledger.dev/schemas/config.v1.json\n" + body,
		`{"$schema": "../../schemas/config.v1.json", "agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbacks": ["anthropic/claude-opus-4-6"]}}}}`,
	} {
		l, err := config.Parse([]byte(text), "with")
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if l.Hash != plain.Hash || string(l.Canonical) != string(plain.Canonical) || len(l.Warnings) != 0 {
			t.Fatalf("%s: hash %s (want %s), warnings %v", text, l.Hash, plain.Hash, l.Warnings)
		}
	}
	_, err = config.Parse([]byte("$schema: 3\n"+body), "bad")
	var ve *config.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "$schema" || !strings.HasPrefix(ve.Problems[0].Msg, "expected a string") {
		t.Fatalf("$schema: 3: %v", err)
	}
}
