package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

var (
	fileType = reflect.TypeOf(File{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

// checkShape walks the decoded tree beside the Go type it will decode into:
// keys the type does not know go to unknown (Msg is the did-you-mean
// suggestion, possibly "") and are deleted from the tree (Parse makes them
// errors, or warnings with [AllowUnknownKeys]: unknown keys are reported,
// never silently ignored or half-applied); values of the wrong JSON kind
// are problems with their path, and are deleted from the tree too (a list
// element made null, so the others keep their index), so the rest of the
// file decodes and its other problems are found in the same pass. It
// reports whether v itself is of t's kind.
func checkShape(v any, t reflect.Type, path string, unknown, problems *[]Problem) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || v == nil {
		return true // free-form (checked in build) or explicit null (= absent)
	}
	bad := func(msg string) bool {
		*problems = append(*problems, Problem{path, msg})
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("expected a mapping, got " + jsonKind(v))
		}
		fields := jsonFields(t)
		for _, k := range sortedMapKeys(m) {
			ft, ok := fields[k]
			if !ok {
				*unknown = append(*unknown, Problem{joinKey(path, k), suggest(k, fields)})
				// Drop it: encoding/json matches keys case-insensitively,
				// so a misspelt "ratelimit" would otherwise take effect.
				delete(m, k)
				continue
			}
			if !checkShape(m[k], ft, joinKey(path, k), unknown, problems) {
				delete(m, k)
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("expected a mapping, got " + jsonKind(v))
		}
		for _, k := range sortedMapKeys(m) {
			if !checkShape(m[k], t.Elem(), joinKey(path, k), unknown, problems) {
				delete(m, k)
			}
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return bad("expected a list, got " + jsonKind(v))
		}
		for i, e := range a {
			if !checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), unknown, problems) {
				// A null keeps the other elements at their index; build's
				// finding on the zero it decodes to is dropped (notUnder).
				a[i] = nil
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("expected a string, got " + jsonKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad("expected true or false, got " + jsonKind(v))
		}
	case reflect.Int, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return bad("expected a whole number, got " + jsonKind(v))
		}
		if _, err := n.Int64(); err != nil {
			return bad(fmt.Sprintf("%s is not a whole number in range", n))
		}
	case reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return bad("expected a number, got " + jsonKind(v))
		}
		if _, err := n.Float64(); err != nil {
			return bad(fmt.Sprintf("%s is not a number in range", n))
		}
	}
	return true
}

// notUnder drops the problems at or under a path a shape problem names:
// the value there was of the wrong kind and left out, so build's finding
// there ("is required") is not news. A problem without a path (the
// parameters' cross-check, run on defaults where a value was left out) is
// dropped too.
func notUnder(shape, problems []Problem) []Problem {
	if len(shape) == 0 {
		return problems
	}
	var out []Problem
next:
	for _, p := range problems {
		if p.Path == "" {
			continue
		}
		for _, s := range shape {
			if p.Path == s.Path || strings.HasPrefix(p.Path, s.Path+".") || strings.HasPrefix(p.Path, s.Path+"[") {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// jsonFields maps a struct's JSON names to field types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// suggest names the known key an unknown one was probably meant to be: one
// that differs only in case or underscores, else the closest by edit
// distance (ignoring case) within a third of the key's length, at most 3
// (fallbaks → fallbacks, resetOnExpry → resetOnExpiry); ties go to the
// first name in sorted order.
func suggest(k string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	best, bestD := "", min(3, len([]rune(k))/3)+1
	for _, n := range names {
		if fold(n) == fold(k) {
			return fmt.Sprintf("; did you mean %q?", n)
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// joinKey appends a map key to a path: plain keys with a dot, keys with
// dots, spaces or brackets quoted (auth.profiles["openai:me@example.com"]).
func joinKey(path, k string) string {
	plain := k != ""
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", truncate(x, 40))
	case bool:
		return fmt.Sprintf("%t", x)
	case json.Number:
		return "the number " + x.String()
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
