package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SnapshotDiff names the first difference between two state encodings
// ("" = equal): the path of the field that differs and both values.
func SnapshotDiff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	// Numbers stay as their digits: sequences and seeds past 2^53 must
	// not compare equal through float64.
	var a, b any
	if err := decodeNumbers(want, &a); err != nil {
		return "the fold's state does not decode: " + err.Error()
	}
	if err := decodeNumbers(got, &b); err != nil {
		return "the snapshot's state does not decode: " + err.Error()
	}
	if d := jsonDiff("state", a, b); d != "" {
		return d
	}
	return "the encodings differ in layout only (not canonical)"
}

// jsonDiff walks two decoded JSON values in sorted key order and names
// the first difference.
func jsonDiff(path string, a, b any) string {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: fold has an object, snapshot %s", path, short(b))
		}
		for _, k := range sortedKeys(av, bv) {
			x, inA := av[k]
			y, inB := bv[k]
			p := path + "." + k
			if strings.ContainsAny(k, ". \x00") {
				p = path + "[" + strconv.Quote(k) + "]"
			}
			switch {
			case !inA:
				return fmt.Sprintf("%s: only in the snapshot (%s)", p, short(y))
			case !inB:
				return fmt.Sprintf("%s: missing from the snapshot (fold has %s)", p, short(x))
			}
			if d := jsonDiff(p, x, y); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return fmt.Sprintf("%s: fold has %s, snapshot %s", path, short(a), short(b))
		}
		for i := range av {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
			return fmt.Sprintf("%s: fold has %s, snapshot %s", path, short(a), short(b))
		}
		return ""
	}
}

func sortedKeys(a, b map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// short renders a JSON value for a diff line, cut at 80 bytes.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// decodeNumbers decodes b into v with numbers as json.Number.
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
