package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// scenarioSchema compiles schemas/scenario.v1.json (with the config
// schema it refers to).
func scenarioSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	cfgRaw, err := os.ReadFile(filepath.Join("..", "..", "schemas", "config.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfgDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(cfgRaw))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("https://fledger.dev/schemas/config.v1.json", cfgDoc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(filepath.Join("..", "..", "schemas", "scenario.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaDoc reads YAML or JSON scenario text as the schema validator's
// document.
func schemaDoc(t *testing.T, text string) any {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// caseHead starts every format case; openaiFirst and anthropicFirst are
// their configs: two OpenAI profiles (openai:a before openai:b) and
// Anthropic with none, one provider's model the primary and the other's
// the fallback.
const (
	caseHead = `name: format-case
description: "A format test case. Errors: RE-017, RE-043, RE-003."
start: "2026-03-02T09:00:00Z"
`
	openaiFirst = `config:
  auth: {profiles: {"openai:a": {provider: openai, type: api_key}, "openai:b": {provider: openai, type: api_key}}}
  agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-sonnet-4-5]}}}
`
	anthropicFirst = `config:
  auth: {profiles: {"openai:a": {provider: openai, type: api_key}, "openai:b": {provider: openai, type: api_key}}}
  agents: {defaults: {model: {primary: anthropic/claude-sonnet-4-5, fallbacks: [openai/gpt-5]}}}
`
)

// Scripted errors of the cases (RE-017: auth, RE-043: billing, RE-003:
// overloaded), as flow mappings.
const (
	authErr     = `{status: 401, code: invalid_api_key, message: "Incorrect API key provided: sk-<REDACTED>."}`
	billingErr  = `{status: 402, message: "402 Insufficient Balance"}`
	overloadErr = `{status: 529, message: "API Error: 529 Overloaded."}`
)

// checkCase is one scenario (caseHead, config, then body: script and
// expect) whose
// expectations hold; each entry of wrong replaces a text of it (Old →
// New) to make exactly one expectation fail with a mismatch naming Want
// (the turn, the field, want and got, in that order).
type checkCase struct {
	name   string
	config string
	body   string
	wrong  []wrongExpect
}

type wrongExpect struct {
	Old, New string
	Want     []string
}

// runCheckCases parses each case (and validates it with the schema),
// runs it, checks that its expectations pass, then that every wrong
// variant fails with exactly one mismatch naming what it must.
func runCheckCases(t *testing.T, cases []checkCase) {
	schema := scenarioSchema(t)
	st := testutil.Store(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := caseHead + c.config + c.body
			if err := schema.Validate(schemaDoc(t, text)); err != nil {
				t.Fatalf("schema refuses the case: %v", err)
			}
			if ms := runChecked(t, st, text); len(ms) > 0 {
				t.Fatalf("expectations not met: %v", ms)
			}
			for _, w := range c.wrong {
				if !strings.Contains(text, w.Old) {
					t.Fatalf("case has no %q", w.Old)
				}
				ms := runChecked(t, st, strings.Replace(text, w.Old, w.New, 1))
				if len(ms) != 1 {
					t.Errorf("%q → %q: %d mismatches %v, want 1", w.Old, w.New, len(ms), ms)
					continue
				}
				if got := ms[0].String(); !containsInOrder(got, w.Want) {
					t.Errorf("%q → %q: mismatch\n%s\nlacks, in order, %q", w.Old, w.New, got, w.Want)
				}
			}
		})
	}
}

// runChecked parses, runs and checks one scenario text.
func runChecked(t *testing.T, st events.Store, text string) []Mismatch {
	t.Helper()
	sc, err := Parse([]byte(text), "case")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), st, sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Check(sc, rep)
}

func containsInOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
