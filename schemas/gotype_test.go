package schemas_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/schemas"
)

// Each schema of a Go type names exactly the type's JSON fields, each with
// the JSON kind encoding/json writes for it, and requires exactly the
// fields always written (no omitempty); nested structs (previousAttempts'
// items, a commit's envelopes) are checked alike.
func TestSchemas_MatchTheirGoTypes(t *testing.T) {
	for _, tc := range []struct {
		file string
		typ  reflect.Type
	}{
		{"decision-record.v1.json", reflect.TypeOf(projections.DecisionRecord{})},
		{"envelope.v1.json", reflect.TypeOf(events.Envelope{})},
		{"commit.v1.json", reflect.TypeOf(events.Commit{})},
	} {
		t.Run(tc.file, func(t *testing.T) {
			for _, p := range checkGoType(schemaDoc(t, tc.file), tc.typ, tc.file) {
				t.Error(p)
			}
		})
	}
}

// The check finds a field missing on either side, a wrong kind and a
// wrong required list.
func TestSchemas_GoTypeCheckFindsDrift(t *testing.T) {
	type rec struct {
		A string   `json:"a"`
		B int      `json:"b,omitempty"`
		C []string `json:"c"`
	}
	doc := map[string]any{
		"type":     "object",
		"required": []any{"a", "b"},
		"properties": map[string]any{
			"a": map[string]any{"type": "integer"},
			"b": map[string]any{"type": "integer"},
			"d": map[string]any{"type": "string"},
		},
	}
	got := checkGoType(doc, reflect.TypeOf(rec{}), "x")
	want := []string{
		"x: a: schema type [integer], Go writes string",
		"x: c: Go field not in the schema",
		"x: d: schema property not in the Go type",
		"x: required [a b], Go always writes [a c]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems\n got %q\nwant %q", got, want)
	}
}

func schemaDoc(t *testing.T, file string) map[string]any {
	t.Helper()
	b, ok := schemas.Files()[file]
	if !ok {
		t.Fatalf("no schema file %s", file)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return doc
}

// goField is one JSON field of a Go struct as encoding/json writes it.
type goField struct {
	name   string
	typ    reflect.Type
	always bool // no omitempty
}

// jsonFields lists t's JSON fields in order, embedded structs without a
// JSON name flattened as encoding/json flattens them.
func jsonFields(t reflect.Type) []goField {
	var out []goField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, goField{name: name, typ: f.Type, always: !strings.Contains(","+opts+",", ",omitempty,")})
	}
	return out
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage(nil))
	timeType   = reflect.TypeOf(time.Time{})
	unixMillis = reflect.TypeOf(projections.UnixMillis(0))
)

// jsonKind is the JSON Schema type encoding/json writes for t.
func jsonKind(t reflect.Type) string {
	switch t {
	case rawMessage:
		return "object" // a payload: always an object
	case timeType, unixMillis:
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "unsupported " + t.Kind().String()
}

// resolve follows a $ref to another schema file (relative to the
// schemas' base) or into root's $defs.
func resolve(root, s map[string]any) map[string]any {
	ref, _ := s["$ref"].(string)
	switch {
	case ref == "":
		return s
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, _ := root["$defs"].(map[string]any)
		d, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		return d
	}
	var doc map[string]any
	_ = json.Unmarshal(schemas.Files()[ref], &doc)
	return doc
}

// checkGoType returns the differences between the object schema s and the
// Go struct t, each prefixed with where.
func checkGoType(s map[string]any, t reflect.Type, where string) []string {
	return checkObject(s, s, t, where)
}

func checkObject(root, s map[string]any, t reflect.Type, where string) []string {
	var out []string
	props, _ := s["properties"].(map[string]any)
	var always []string
	seen := map[string]bool{}
	for _, f := range jsonFields(t) {
		seen[f.name] = true
		if f.always {
			always = append(always, f.name)
		}
		p, ok := props[f.name].(map[string]any)
		if !ok {
			out = append(out, where+": "+f.name+": Go field not in the schema")
			continue
		}
		p = resolve(root, p)
		kind := jsonKind(f.typ)
		if types := schemaTypes(p); !slices.Contains(types, kind) {
			out = append(out, where+": "+f.name+": schema type "+fmtList(types)+", Go writes "+kind)
			continue
		}
		elem := f.typ
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		switch {
		case kind == "array" && elem.Elem().Kind() == reflect.Struct:
			items, _ := p["items"].(map[string]any)
			out = append(out, checkObject(root, resolve(root, items), elem.Elem(), where+": "+f.name+"[]")...)
		case kind == "object" && elem.Kind() == reflect.Struct && elem != timeType:
			out = append(out, checkObject(root, p, elem, where+": "+f.name)...)
		}
	}
	var names []string
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !seen[n] {
			out = append(out, where+": "+n+": schema property not in the Go type")
		}
	}
	req := anyList(s["required"])
	sorted := slices.Clone(always)
	sort.Strings(sorted)
	sort.Strings(req)
	if !slices.Equal(req, sorted) {
		out = append(out, where+": required "+fmtList(req)+", Go always writes "+fmtList(sorted))
	}
	return out
}

// schemaTypes is s's "type" as a list ("type": "string" or
// ["array", "null"]).
func schemaTypes(s map[string]any) []string {
	if t, ok := s["type"].(string); ok {
		return []string{t}
	}
	return anyList(s["type"])
}

func anyList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func fmtList(l []string) string { return "[" + strings.Join(l, " ") + "]" }
