package events

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	fastjson "github.com/goccy/go-json"
)

// A payload field without omitempty (or omitzero) is written by every
// writer: json.Marshal writes it, zero or not, and schemas/events marks it
// required. A stored payload without one is not what fledger wrote (a
// foreign producer, a hand-edited message): decoded, the absent field
// would be a zero value folded as if it had been recorded — a cooldown of
// profile "", a turn of session "". The payload plan refuses it (the
// plan's required bits) and the go-json path checks it here, so both
// paths refuse the same payloads with the same error.

// missingFieldError is a required payload field absent from the stored
// JSON. path is the field's JSON path below the payload ("turn_id",
// "chain[2].provider").
type missingFieldError struct {
	path string
	typ  reflect.Type // the field's Go type (what its value would be)
}

func (e *missingFieldError) Error() string {
	return "the required field " + e.path + " is missing"
}

// fieldRequired reports whether a field with json tag options opts is
// written by json.Marshal whatever its value.
func fieldRequired(opts string) bool {
	return !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero")
}

// requiredField is one field a presence check looks at: a required one,
// or one whose value holds objects with required fields of their own.
type requiredField struct {
	name     string
	required bool
	typ      reflect.Type
	nested   *requiredSet // the fields of its struct (or its elements' or pointee's)
	slice    bool         // nested applies to each element
}

type requiredSet struct{ fields []requiredField }

func buildRequired(t reflect.Type, depth int) *requiredSet {
	if t.Kind() != reflect.Struct || depth > 8 || customDecoded(t) {
		return nil
	}
	s := &requiredSet{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if !f.IsExported() || f.Anonymous || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !hasTag || name == "" {
			name = f.Name
		}
		rf := requiredField{name: name, required: fieldRequired(opts), typ: f.Type}
		et := f.Type
		switch {
		case et.Kind() == reflect.Pointer:
			et = et.Elem()
		case et.Kind() == reflect.Slice:
			et, rf.slice = et.Elem(), true
		}
		if et.Kind() == reflect.Struct {
			rf.nested = buildRequired(et, depth+1)
		}
		if rf.required || rf.nested != nil {
			s.fields = append(s.fields, rf)
		}
	}
	if len(s.fields) == 0 {
		return nil
	}
	return s
}

// check reports the first required field that raw (a JSON object that
// decoded into the set's type) lacks, at any depth, below prefix. Keys
// match as go-json matches them: exactly, else without regard to case
// (lookupKey); with exact, a key matches only as
// the field's name is written (the writer's rule, codec.go strictCheck).
// A nil set checks nothing.
func (s *requiredSet) check(raw []byte, prefix string, exact bool) error {
	if s == nil {
		return nil
	}
	var obj map[string]fastjson.RawMessage
	if err := fastjson.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil // not an object here: the decode that accepted it decides
	}
	for i := range s.fields {
		f := &s.fields[i]
		v, ok := obj[f.name]
		if !ok && !exact {
			v, ok = lookupKey(obj, f.name)
		}
		if !ok {
			if f.required {
				return &missingFieldError{path: prefix + f.name, typ: f.typ}
			}
			continue
		}
		if f.nested == nil || string(v) == "null" {
			continue
		}
		if !f.slice {
			if err := f.nested.check(v, prefix+f.name+".", exact); err != nil {
				return err
			}
			continue
		}
		var elems []fastjson.RawMessage
		if err := fastjson.Unmarshal(v, &elems); err != nil {
			continue
		}
		for j, el := range elems {
			if err := f.nested.check(el, prefix+f.name+"["+strconv.Itoa(j)+"].", exact); err != nil {
				return err
			}
		}
	}
	return nil
}

// lookupKey finds a key equal to name without regard to case, as go-json
// matches a field when no key is its name exactly.
func lookupKey(obj map[string]fastjson.RawMessage, name string) (fastjson.RawMessage, bool) {
	found := ""
	for k := range obj {
		if strings.EqualFold(k, name) && (found == "" || k < found) {
			found = k // the least of several, whatever the map's order
		}
	}
	if found == "" {
		return nil, false
	}
	return obj[found], true
}

// missingError is the WireError of a payload that lacks a required field.
func missingError(prefix, typ string, me *missingFieldError) *WireError {
	return &WireError{Path: prefix + "." + me.path, Want: fmt.Sprintf("%s (every %s payload has it)", wantOf(me.typ, false), typ),
		Found: "no " + me.path + " field", Err: me}
}
