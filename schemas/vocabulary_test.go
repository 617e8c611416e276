package schemas_test

import (
	"encoding/json"
	"io/fs"
	"reflect"
	"slices"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/schemas"
)

// enumsOf collects every "enum" list in a decoded JSON schema.
func enumsOf(v any, out *[][]string) {
	switch x := v.(type) {
	case map[string]any:
		if e, ok := x["enum"].([]any); ok {
			var s []string
			for _, v := range e {
				str, _ := v.(string)
				s = append(s, str)
			}
			*out = append(*out, s)
		}
		for _, v := range x {
			enumsOf(v, out)
		}
	case []any:
		for _, v := range x {
			enumsOf(v, out)
		}
	}
}

// taggedFields counts the fields of t (and of the structs it holds) whose
// enum tag is tag.
func taggedFields(t reflect.Type, tag string, seen map[reflect.Type]bool) int {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return 0
	}
	seen[t] = true
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("enum") == tag {
			n++
		}
		n += taggedFields(f.Type, tag, seen)
	}
	return n
}

// TestVocabulary_SchemaEnumsAreTheEventsSets: every enum in every event
// schema that names a reason (or a disposition) lists exactly
// events.Reasons (events.Dispositions), in order, and the current schema
// of each type has one such enum per tagged payload field.
func TestVocabulary_SchemaEnumsAreTheEventsSets(t *testing.T) {
	sets := []struct {
		name   string
		set    []string
		member string // a spelling only this set has
		tag    string // the payload tag of its fields ("" = literal tag)
	}{
		{"reasons", events.Spellings(events.Reasons), string(events.ReasonAuthPermanent), "reason"},
		{"dispositions", events.Spellings(events.Dispositions), string(events.DispositionCoordination), ""},
	}
	files, err := fs.Glob(schemas.EventFiles(), "events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files (%v)", err)
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			for _, name := range files {
				b, err := fs.ReadFile(schemas.EventFiles(), name)
				if err != nil {
					t.Fatal(err)
				}
				var doc any
				if err := json.Unmarshal(b, &doc); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var enums [][]string
				enumsOf(doc, &enums)
				for _, e := range enums {
					if slices.Contains(e, s.member) && !slices.Equal(e, s.set) {
						t.Errorf("%s: enum %v, want %v", name, e, s.set)
					}
				}
			}
			if s.tag == "" {
				return
			}
			reg := events.NewCatalogRegistry()
			for _, p := range events.Examples() {
				cur, _ := reg.Version(p.EventType())
				b, err := fs.ReadFile(schemas.EventFiles(), schemas.EventSchemaPath(p.EventType(), cur))
				if err != nil {
					t.Fatal(err)
				}
				var doc any
				if err := json.Unmarshal(b, &doc); err != nil {
					t.Fatal(err)
				}
				var enums [][]string
				enumsOf(doc, &enums)
				got := 0
				for _, e := range enums {
					if slices.Equal(e, s.set) {
						got++
					}
				}
				if want := taggedFields(reflect.TypeOf(p), s.tag, map[reflect.Type]bool{}); got != want {
					t.Errorf("%s v%d: %d %s enums, want %d (one per enum:%q field)", p.EventType(), cur, got, s.name, want, s.tag)
				}
			}
		})
	}
}
