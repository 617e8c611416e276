package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

func compileConfigSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	s, err := c.Compile(filepath.Join("..", "..", "schemas", "config.v1.json"))
	if err != nil {
		t.Fatalf("compile schemas/config.v1.json: %v", err)
	}
	return s
}

func decodeInstance(t *testing.T, js []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The schema (for editors and CI linting of config files) accepts every
// fixture config and the canonical form fledger stores in ConfigApplied.
func TestSchema_AcceptsFixturesAndCanonicalForms(t *testing.T) {
	s := compileConfigSchema(t)
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "configs", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no fixture configs")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(decodeInstance(t, js)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		l, err := config.Parse(raw, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(decodeInstance(t, l.Canonical)); err != nil {
			t.Errorf("%s canonical form: %v", f, err)
		}
	}
}

// The schema rejects what Parse rejects, at the same place.
func TestSchema_RejectsBadConfigs(t *testing.T) {
	s := compileConfigSchema(t)
	for _, text := range []string{
		`{"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbacks": ["gpt"]}}}}`,
		`{"auth": {"profiles": {"openai:a": {"provider": "openai", "type": "password"}}}}`,
		`{"auth": {"cooldowns": {"rateLimit": "linear"}}}`,
		`{"retry": {"provider": {"maxRetries": -1}}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(v); err == nil {
			t.Errorf("schema accepted %s", text)
		}
		if _, err := config.Parse([]byte(text), "x"); !config.IsInvalid(err) {
			t.Errorf("Parse accepted %s", text)
		}
	}
}
