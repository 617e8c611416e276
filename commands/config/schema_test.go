package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// Every canonical form validates against the schema, including a config
// without fallbacks (format 1 wrote "fallbacks": null there) and the
// defaults alone.
func TestSchema_AcceptsCanonicalFormsWithoutFallbacks(t *testing.T) {
	s := compileConfigSchema(t)
	for _, text := range []string{
		"{}",
		"agents: {defaults: {model: {primary: openai/gpt-5}}}",
		"agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: []}}, entries: {coder: {model: {primary: openai/gpt-5}}}}",
	} {
		l, err := config.Parse([]byte(text), "x")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(decodeInstance(t, l.Canonical)); err != nil {
			t.Errorf("%s canonical form %s: %v", text, l.Canonical, err)
		}
		again, err := config.Parse(l.Canonical, "canonical")
		if err != nil || again.Hash != l.Hash || !reflect.DeepEqual(again.Policy, l.Policy) {
			t.Errorf("%s: canonical round trip: %v", text, err)
		}
	}
}

// The schema's bounds and unknown keys match Parse's.
func TestSchema_RejectsUnknownKeysAndOverflows(t *testing.T) {
	s := compileConfigSchema(t)
	for _, text := range []string{
		`{"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "fallbaks": ["openai/gpt-5-mini"]}}}}`,
		`{"auth": {"cooldowns": {"resetOnExpry": true}}}`,
		`{"auth": {"cooldowns": {"ladderMs": [9223372036854775807]}}}`,
		`{"auth": {"cooldowns": {"billingMaxMs": 31622400001}}}`,
		`{"failover": {"chainOverloadRetry": {"rounds": 1001}}}`,
		`{"canonicalVersion": 1}`,
	} {
		if err := s.Validate(decodeInstance(t, []byte(text))); err == nil {
			t.Errorf("schema accepted %s", text)
		}
		if _, err := config.Parse([]byte(text), "x"); !config.IsInvalid(err) {
			t.Errorf("Parse accepted %s", text)
		}
	}
}
