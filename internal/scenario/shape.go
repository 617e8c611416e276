package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// maxShapeProblems caps the shape problems reported for one part of a
// file (the top level, a step, the default, the end-of-run expect); a last
// problem says how many more there were.
const maxShapeProblems = 20

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// shapeProblems checks JSON text against the Go type it is decoded into,
// which encoding/json does not do well enough for a file people write: a
// key must be spelt exactly as its field (encoding/json matches keys
// case-insensitively), every unknown key is reported with its full path
// and a hint, a type mismatch names its path and the types
// ("want an integer, got a string"), and a null inside a list is refused.
// A null elsewhere leaves the field unset. Types that decode themselves
// (json.Unmarshaler, json.RawMessage) are not looked into.
func shapeProblems(path string, js []byte, t reflect.Type) []Problem {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []Problem{{Path: path, Msg: fmt.Sprintf("not valid JSON: %v", err)}}
	}
	s := &shaper{}
	s.walk(path, v, t)
	if s.more > 0 {
		s.problems = append(s.problems, Problem{Path: path, Msg: fmt.Sprintf("… and %d more %s", s.more, plural(s.more, "problem"))})
	}
	return s.problems
}

type shaper struct {
	problems []Problem
	more     int
}

func (s *shaper) add(path, msg string) {
	if len(s.problems) >= maxShapeProblems {
		s.more++
		return
	}
	s.problems = append(s.problems, Problem{Path: path, Msg: msg})
}

// walk checks v (a decoded JSON value, numbers as json.Number) against t.
func (s *shaper) walk(path string, v any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	ok := true
	switch t.Kind() {
	case reflect.Struct:
		m, isMap := v.(map[string]any)
		if ok = isMap; ok {
			s.object(path, m, t)
		}
	case reflect.Map:
		m, isMap := v.(map[string]any)
		if ok = isMap; ok {
			for _, k := range sortedKeys(m) {
				s.walk(join(path, k), m[k], t.Elem())
			}
		}
	case reflect.Slice:
		l, isList := v.([]any)
		if ok = isList; ok {
			s.list(path, l, t.Elem())
		}
	case reflect.String:
		_, ok = v.(string)
	case reflect.Bool:
		_, ok = v.(bool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, isNum := v.(json.Number)
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); isNum && err != nil {
			s.add(path, fmt.Sprintf("want an integer, got %s", n))
			return
		}
		ok = isNum
	}
	if !ok {
		s.add(path, fmt.Sprintf("want %s, got %s", wantKind(t), gotKind(v)))
	}
}

// object checks a mapping against struct t: every key must be one of its
// fields' JSON names, exactly.
func (s *shaper) object(path string, m map[string]any, t reflect.Type) {
	fields := jsonFields(t)
	for _, k := range sortedKeys(m) {
		f, ok := fields[k]
		if !ok {
			s.add(join(path, k), unknownField(k, fields))
			continue
		}
		s.walk(join(path, k), m[k], f)
	}
}

// list checks every entry of a list against elem; a null entry is refused
// (null means "not checked", which a list entry cannot be).
func (s *shaper) list(path string, l []any, elem reflect.Type) {
	for i, x := range l {
		p := fmt.Sprintf("%s[%d]", path, i)
		if x == nil {
			s.add(p, "is null (~), which a list entry cannot be: write none for an absent value")
			continue
		}
		s.walk(p, x, elem)
	}
}

// jsonFields maps struct t's JSON field names to their types (fields
// without a name, "-", and unexported ones are left out).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// unknownField says key is not a field, with the field it is most likely
// a misspelling of: the same name in another case, else one at most two
// edits away.
func unknownField(key string, fields map[string]reflect.Type) string {
	msg := fmt.Sprintf("unknown field %q", key)
	best, bestD := "", 3
	for _, name := range sortedKeys(fields) {
		if strings.EqualFold(name, key) {
			return msg + fmt.Sprintf(" (keys are case-sensitive); did you mean %q?", name)
		}
		if d := editDistance(strings.ToLower(key), strings.ToLower(name)); d < bestD {
			best, bestD = name, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return "an integer"
}

func gotKind(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("a string (%q)", x)
	case json.Number:
		return "a number (" + string(x) + ")"
	case bool:
		return "a boolean (" + strconv.FormatBool(x) + ")"
	case []any:
		return "a list"
	}
	return "a mapping"
}

// join appends a key to a path ("" is the file's top level).
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode decodes js into out after checking its shape (shapeProblems),
// adding every problem at path; it reports whether out was decoded.
func (v *validator) decode(path string, js []byte, out any) bool {
	problems := shapeProblems(path, js, reflect.TypeOf(out).Elem())
	v.problems = append(v.problems, problems...)
	if len(problems) > 0 {
		return false
	}
	if err := strict(js, out); err != nil {
		v.add(path, err.Error())
		return false
	}
	return true
}
