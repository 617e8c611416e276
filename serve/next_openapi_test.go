package serve

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// openAPIDoc is schemas/openapi.v1.yaml as generic JSON.
func openAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../schemas/openapi.v1.yaml")
	testutil.NoError(t, err)
	js, err := yaml.YAMLToJSON(raw)
	testutil.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	testutil.NoError(t, err)
	return doc.(map[string]any)
}

// componentSchema is components.schemas.<name> of the document.
func componentSchema(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	s, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	if !ok {
		t.Fatalf("components.schemas.%s is missing", name)
	}
	return s
}

// valueKind is the JSON Schema type of a decoded JSON value.
func valueKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// propKind is the JSON type a property schema declares: its type, or
// through a $ref the referenced component's.
func propKind(t *testing.T, doc, prop map[string]any) string {
	t.Helper()
	if ref, ok := prop["$ref"].(string); ok {
		prop = componentSchema(t, doc, strings.TrimPrefix(ref, "#/components/schemas/"))
	}
	k, _ := prop["type"].(string)
	return k
}

// nextCases are Nexts of every kind the engine returns: "full" sets every
// field the kind can carry, "min" only those it always carries.
func nextCases() []struct {
	name string
	full bool
	next policy.Next
} {
	notices := []policy.Notice{{Kind: policy.NoticeFallback, Text: "↪️ Model Fallback: openai/gpt-5", Delivered: true}}
	attempts := []events.ExhaustedAttempt{{Provider: "openai", Model: "gpt-5", Reason: "rate_limit", Status: 429, Code: "rate_limit_error", Error: "Rate limited"}}
	return []struct {
		name string
		full bool
		next policy.Next
	}{
		{"call full", true, policy.Next{Kind: policy.NextCall, Notices: notices, Call: &policy.Call{Provider: "openai", Model: "gpt-5",
			ProfileID: "openai:a", Attempt: 3, CandidateIndex: 1, Kind: policy.KindChainRetry, Round: 2}}},
		{"call min", false, policy.Next{Kind: policy.NextCall, Call: &policy.Call{Provider: "groq", Model: "llama", Attempt: 1, Kind: policy.KindFirst}}},
		{"wait full", true, policy.Next{Kind: policy.NextWait, Notices: notices, WaitMs: 1500, ResumeAt: 1796534116364}},
		{"wait min", false, policy.Next{Kind: policy.NextWait, ResumeAt: 1796534116364}},
		{"done full", true, policy.Next{Kind: policy.NextDone, Notices: notices, AnsweredBy: policy.ModelRef{Provider: "openai", Model: "gpt-5"}, ProfileID: "openai:a"}},
		{"done min", false, policy.Next{Kind: policy.NextDone, AnsweredBy: policy.ModelRef{Provider: "groq", Model: "llama"}}},
		{"exhausted full", true, policy.Next{Kind: policy.NextExhausted, Notices: notices, Summary: "Rate limited", RawError: true,
			Attempts: attempts, SoonestCooldownExpiry: 1796534116364}},
		{"exhausted min", false, policy.Next{Kind: policy.NextExhausted}},
		{"stop full", true, policy.Next{Kind: policy.NextStop, Notices: notices, Disposition: string(events.DispositionFailover), Reason: "format", Message: "bad request"}},
		{"stop min", false, policy.Next{Kind: policy.NextStop, Disposition: string(events.DispositionAbort)}},
		{"switch full", true, policy.Next{Kind: policy.NextSwitch, Notices: notices, SwitchTo: policy.ModelRef{Provider: "google-gemini", Model: "gemini-2.5-pro"},
			ProfileID: "google-gemini:me", Message: policy.LiveSwitchText(policy.ModelRef{Provider: "google-gemini", Model: "gemini-2.5-pro"}, "it is not in the candidate chain")}},
		{"switch min", false, policy.Next{Kind: policy.NextSwitch, SwitchTo: policy.ModelRef{Provider: "groq", Model: "llama"}, Message: "LiveSessionModelSwitchError"}},
	}
}

// Every Next the server writes is valid against schemas/openapi.v1.yaml's
// Next oneOf, and matches the variant its action maps to: the variant's
// required fields are present, every field written is declared with the
// JSON kind written, and a fully set Next writes exactly the variant's
// fields. The discriminator maps exactly the engine's six actions.
func TestOpenAPI_NextVariantsMatchServer(t *testing.T) {
	doc := openAPIDoc(t)
	next := componentSchema(t, doc, "Next")
	disc, _ := next["discriminator"].(map[string]any)
	if disc["propertyName"] != "action" {
		t.Fatalf("Next discriminator %v, want propertyName action", disc)
	}
	mapping, _ := disc["mapping"].(map[string]any)
	wantActions := []string{string(policy.NextCall), string(policy.NextDone), string(policy.NextExhausted), string(policy.NextStop), string(policy.NextSwitch), string(policy.NextWait)}
	if got := slices.Sorted(maps.Keys(mapping)); !slices.Equal(got, wantActions) {
		t.Fatalf("Next discriminator maps %v, want %v", got, wantActions)
	}
	var oneOf []string
	for _, v := range next["oneOf"].([]any) {
		oneOf = append(oneOf, v.(map[string]any)["$ref"].(string))
	}
	var mapped []string
	for _, a := range wantActions {
		mapped = append(mapped, mapping[a].(string))
	}
	sort.Strings(oneOf)
	sort.Strings(mapped)
	if !slices.Equal(oneOf, mapped) {
		t.Fatalf("Next oneOf %v, discriminator mapping %v", oneOf, mapped)
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	testutil.NoError(t, c.AddResource("openapi.json", doc))
	whole, err := c.Compile("openapi.json#/components/schemas/Next")
	testutil.NoError(t, err)

	covered := map[string]bool{}
	for _, tc := range nextCases() {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(nextJSON(tc.next))
			testutil.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			testutil.NoError(t, err)
			if err := whole.Validate(inst); err != nil {
				t.Fatalf("%s does not validate against Next: %v", b, err)
			}
			obj := inst.(map[string]any)
			action, _ := obj["action"].(string)
			ref, _ := mapping[action].(string)
			variant := componentSchema(t, doc, strings.TrimPrefix(ref, "#/components/schemas/"))
			props := variant["properties"].(map[string]any)
			if variant["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", ref)
			}
			for _, r := range variant["required"].([]any) {
				if _, ok := obj[r.(string)]; !ok {
					t.Errorf("%s: required %q is not written: %s", ref, r, b)
				}
			}
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				p, ok := props[k].(map[string]any)
				if !ok {
					t.Errorf("%s: the server writes %q, which the variant does not declare", ref, k)
					continue
				}
				if got, want := valueKind(obj[k]), propKind(t, doc, p); got != want {
					t.Errorf("%s.%s: the server writes a JSON %s, the variant declares %s", ref, k, got, want)
				}
			}
			if tc.full {
				covered[action] = true
				if got, want := slices.Sorted(maps.Keys(obj)), slices.Sorted(maps.Keys(props)); !slices.Equal(got, want) {
					t.Errorf("%s: a fully set %s writes %v, the variant declares %v", ref, action, got, want)
				}
			}
		})
	}
	if got := slices.Sorted(maps.Keys(covered)); !slices.Equal(got, wantActions) {
		t.Errorf("fully set cases cover %v, want %v", got, wantActions)
	}
}

// The enums of the Next variants are the engine's own value sets.
func TestOpenAPI_NextEnumsMatchEngine(t *testing.T) {
	doc := openAPIDoc(t)
	enum := func(schema, prop string) []string {
		p := componentSchema(t, doc, schema)["properties"].(map[string]any)[prop].(map[string]any)
		var out []string
		for _, v := range p["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var dispositions []string
	for _, d := range events.Dispositions {
		dispositions = append(dispositions, string(d))
	}
	for _, tc := range []struct {
		schema, prop string
		want         []string
	}{
		{"NextCall", "action", []string{"call"}},
		{"NextWait", "action", []string{"wait"}},
		{"NextDone", "action", []string{"done"}},
		{"NextExhausted", "action", []string{"exhausted"}},
		{"NextStop", "action", []string{"stop"}},
		{"NextSwitch", "action", []string{"switch"}},
		{"NextCall", "kind", []string{string(policy.KindFirst), string(policy.KindRetry), string(policy.KindRotation),
			string(policy.KindFallback), string(policy.KindProbe), string(policy.KindChainRetry),
			string(policy.KindLiveSwitch), string(policy.KindTransportRecovery)}},
		{"NextStop", "disposition", dispositions},
		{"Notice", "kind", []string{string(policy.NoticeFallback), string(policy.NoticeFallbackCleared), string(policy.NoticeOverloadWait)}},
	} {
		if got := enum(tc.schema, tc.prop); !slices.Equal(got, tc.want) {
			t.Errorf("%s.%s enum %v, want %v", tc.schema, tc.prop, got, tc.want)
		}
	}
}
