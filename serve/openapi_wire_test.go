package serve_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/fledger/fledger/internal/apispec"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
)

// openObjects are the schema places that may still be an object with no
// declared properties, each with why.
var openObjects = map[string]string{}

// Each schema of the document is the JSON of the Go type the server reads
// or answers with: the same field names, every one both ways, the same
// JSON kinds, and, for an answer, required exactly when the field is
// always sent (no omitempty), so a generated client types it as present.
func TestOpenAPI_SchemasMatchTheWireTypes(t *testing.T) {
	raw, err := os.ReadFile("../schemas/openapi.v1.yaml")
	testutil.NoError(t, err)
	doc, err := apispec.Load(raw)
	testutil.NoError(t, err)
	cases := []struct {
		schema string
		goType any
		answer bool
	}{
		{"BeginRequest", serve.BeginRequest{}, false},
		{"OutcomeRequest", serve.OutcomeRequest{}, false},
		{"TurnRef", serve.TurnRef{}, false},
		{"SessionRef", serve.SessionRef{}, false},
		{"ModelRequest", serve.ModelRequest{}, false},
		{"ResetRequest", serve.ResetRequest{}, false},
		{"PinRequest", serve.PinRequest{}, false},
		{"TurnStep", serve.TurnStep{}, true},
		{"TurnView", serve.TurnView{}, true},
		{"SessionView", serve.SessionView{}, true},
		{"ProfilesView", serve.ProfilesView{}, true},
		{"DecisionsView", serve.DecisionsView{}, true},
		{"Health", serve.Health{}, true},
		{"ErrorBody", serve.ErrorBody{}, true},
		{"Timeline", replay.RangeTimeline{}, true},
		{"Explanation", replay.Explanation{}, true},
		{"WhatIfRequest", serve.WhatIfRequest{}, false},
		{"WhatIfReport", serve.WhatIfReport{}, true},
	}
	for _, tc := range cases {
		ref := doc.Components.Schemas[tc.schema]
		if ref == nil {
			t.Errorf("no component %s", tc.schema)
			continue
		}
		for _, p := range wireMismatches(tc.schema, ref.Value, reflect.TypeOf(tc.goType), tc.answer) {
			t.Error(p)
		}
	}
	// The inline schemas of the auth order and session command routes.
	authOrder := doc.Paths.Value("/v1/agents/{agent}/auth/order/{provider}").Post
	for _, p := range wireMismatches("setAuthOrder request", authOrder.RequestBody.Value.Content.Get("application/json").Schema.Value, reflect.TypeOf(serve.AuthOrderRequest{}), false) {
		t.Error(p)
	}
	for _, p := range wireMismatches("setAuthOrder answer", authOrder.Responses.Status(200).Value.Content.Get("application/json").Schema.Value, reflect.TypeOf(serve.AuthOrderResult{}), true) {
		t.Error(p)
	}
	cmd := doc.Components.Responses["SessionCommand"].Value.Content.Get("application/json").Schema.Value
	for _, p := range wireMismatches("SessionCommand", cmd, reflect.TypeOf(serve.SessionCommandResult{}), true) {
		t.Error(p)
	}
}

// wireMismatches compares schema s (at) with Go type g.
func wireMismatches(at string, s *openapi3.Schema, g reflect.Type, answer bool) []string {
	for g.Kind() == reflect.Pointer {
		g = g.Elem()
	}
	if s == nil {
		return []string{at + ": no schema"}
	}
	custom := g.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(g).Implements(reflect.TypeFor[json.Unmarshaler]())
	switch {
	case custom:
		return nil // its own JSON form: the schema says what it is
	case g.Kind() == reflect.Struct:
		return structMismatches(at, s, g, answer)
	case g.Kind() == reflect.Slice:
		if !s.Type.Is("array") || s.Items == nil {
			return []string{at + ": the Go type is a list, the schema is not an array of items"}
		}
		return wireMismatches(at+"[]", s.Items.Value, g.Elem(), answer)
	case g.Kind() == reflect.Map:
		if s.AdditionalProperties.Schema == nil {
			return []string{at + ": the Go type is a map, the schema has no additionalProperties schema"}
		}
		return wireMismatches(at+"{}", s.AdditionalProperties.Schema.Value, g.Elem(), answer)
	}
	want := map[reflect.Kind]string{reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer", reflect.Int64: "integer",
		reflect.Uint64: "integer", reflect.Int32: "integer", reflect.Uint32: "integer"}[g.Kind()]
	if (len(s.Enum) > 0 || s.Const != nil) && want == "string" && s.Type == nil {
		return nil // an enum or a const of strings
	}
	if want == "" || s.Type == nil || !s.Type.Is(want) {
		return []string{at + ": the Go type is " + g.Kind().String() + ", the schema's type is " + strings.Join(typesOf(s), "|")}
	}
	return nil
}

func structMismatches(at string, s *openapi3.Schema, g reflect.Type, answer bool) []string {
	props := map[string]*openapi3.Schema{}
	collectProps(s, props)
	if len(props) == 0 {
		if _, ok := openObjects[at]; ok {
			return nil
		}
		return []string{at + ": an object with no declared properties (the Go type " + g.String() + " has fields)"}
	}
	var out []string
	fields := map[string]bool{}
	var always []string
	for _, f := range reflect.VisibleFields(g) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || len(f.Index) > 1 && promotedAway(g, f) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			continue // an embedded struct: encoding/json writes its fields at this level
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = true
		if !strings.Contains(opts, "omitempty") {
			always = append(always, name)
		}
		p, ok := props[name]
		if !ok {
			out = append(out, at+"."+name+": the Go type "+g.String()+" has it, the schema does not")
			continue
		}
		if strings.Contains(opts, "string") {
			// ",string": a number written as a JSON string.
			if p.Type == nil || !p.Type.Is("string") {
				out = append(out, at+"."+name+": the Go field is written as a string (,string), the schema's type is "+strings.Join(typesOf(p), "|"))
			}
			continue
		}
		out = append(out, wireMismatches(at+"."+name, p, f.Type, answer)...)
	}
	for name := range props {
		if !fields[name] {
			out = append(out, at+"."+name+": the schema has it, the Go type "+g.String()+" does not")
		}
	}
	if answer {
		required := requiredOf(s)
		sort.Strings(always)
		if !slices.Equal(required, always) {
			out = append(out, at+": required "+strings.Join(required, ",")+"; the Go type always sends "+strings.Join(always, ","))
		}
	}
	return out
}

// promotedAway reports whether the promoted field f is not written by
// encoding/json: one of the structs it is promoted through has a JSON name
// of its own (it is written as a nested object then).
func promotedAway(g reflect.Type, f reflect.StructField) bool {
	t := g
	for _, i := range f.Index[:len(f.Index)-1] {
		sf := t.Field(i)
		if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); !sf.Anonymous || name != "" {
			return true
		}
		t = sf.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return false
}

// requiredOf is what s requires of every value: its own required, those
// of each allOf part, and those every oneOf (or anyOf) alternative
// requires; sorted.
func requiredOf(s *openapi3.Schema) []string {
	set := map[string]bool{}
	for _, r := range s.Required {
		set[r] = true
	}
	for _, part := range s.AllOf {
		for _, r := range requiredOf(part.Value) {
			set[r] = true
		}
	}
	for _, group := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if len(group) == 0 {
			continue
		}
		count := map[string]int{}
		for _, alt := range group {
			for _, r := range requiredOf(alt.Value) {
				count[r]++
			}
		}
		for r, n := range count {
			if n == len(group) {
				set[r] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// collectProps adds s's properties, with those of its alternatives.
func collectProps(s *openapi3.Schema, props map[string]*openapi3.Schema) {
	for k, p := range s.Properties {
		props[k] = p.Value
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, alt := range group {
			collectProps(alt.Value, props)
		}
	}
}

func typesOf(s *openapi3.Schema) []string {
	if s.Type == nil {
		return []string{"(none)"}
	}
	return s.Type.Slice()
}
