package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/fledger/fledger/events"
)

// FieldDiff is one payload field that differs: its JSON path (e.g.
// "cooldown_until", "chain[1].model") and both values as JSON ("" when the
// field is absent on that side).
type FieldDiff struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Recorded string `json:"recorded"`
}

// canonical is a payload's canonical JSON: its wire form decoded and
// re-encoded with sorted keys, nulls and empty lists/objects dropped (the
// catalog omits them on the wire, so a decoded nil and a decided empty
// list are the same fact).
func canonical(p events.Payload) (json.RawMessage, any, error) {
	if p == nil {
		return json.RawMessage("null"), nil, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, nil, err
	}
	tree = prune(tree)
	out, err := json.Marshal(tree)
	return out, tree, err
}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			x = prune(x)
			if empty(x) {
				delete(t, k)
				continue
			}
			t[k] = x
		}
		return t
	case []any:
		for i := range t {
			t[i] = prune(t[i])
		}
		return t
	}
	return v
}

func empty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// diffFields lists the leaf fields that differ between two pruned JSON
// trees, sorted by path.
func diffFields(exp, rec any) []FieldDiff {
	a, b := map[string]string{}, map[string]string{}
	flatten("", exp, a)
	flatten("", rec, b)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []FieldDiff
	for k := range keys {
		if a[k] != b[k] {
			out = append(out, FieldDiff{Path: k, Expected: a[k], Recorded: b[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func flatten(path string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, x, out)
		}
	case []any:
		for i, x := range t {
			flatten(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	default:
		b, _ := json.Marshal(t)
		if path == "" {
			path = "."
		}
		out[path] = string(b)
	}
}
