package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Markers delimiting the generated DecisionRecord component in
// schemas/openapi.v1.yaml (components.schemas).
const (
	componentBegin = "    # BEGIN GENERATED DecisionRecord (go generate ./schemas): schemas/decision-record.v1.json without $schema and $id"
	componentEnd   = "    # END GENERATED DecisionRecord"
)

// decisionComponent is the OpenAPI component DecisionRecord: the decision
// record's schema file without $schema and $id, as YAML in the document's
// style (block mappings, leaf schemas in flow style), indented under
// components.schemas.
func decisionComponent(file []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(file))
	dec.UseNumber()
	v, err := orderedJSON(dec)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(ordered)
	if !ok {
		return nil, fmt.Errorf("decision record schema is not an object")
	}
	var keep ordered
	for _, kv := range doc {
		if kv.k != "$schema" && kv.k != "$id" {
			keep = append(keep, kv)
		}
	}
	var b bytes.Buffer
	b.WriteString(componentBegin + "\n    DecisionRecord:\n")
	writeBlock(&b, keep, 6)
	b.WriteString(componentEnd + "\n")
	return b.Bytes(), nil
}

// ordered is a JSON object with its key order.
type ordered []struct {
	k string
	v any
}

// orderedJSON reads one JSON value, objects as ordered.
func orderedJSON(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o ordered
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := orderedJSON(dec)
				if err != nil {
					return nil, err
				}
				o = append(o, struct {
					k string
					v any
				}{k.(string), v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			var a []any
			for dec.More() {
				v, err := orderedJSON(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
	}
	return tok, nil
}

// writeBlock writes o as a YAML block mapping at indent: a value holding
// an object that itself holds objects, and every "properties", as a
// nested block; everything else in flow style on one line.
func writeBlock(w io.Writer, o ordered, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, kv := range o {
		if sub, ok := kv.v.(ordered); ok && (kv.k == "properties" || !leaf(sub)) {
			fmt.Fprintf(w, "%s%s:\n", pad, kv.k)
			writeBlock(w, sub, indent+2)
			continue
		}
		fmt.Fprintf(w, "%s%s: %s\n", pad, kv.k, flow(kv.v))
	}
}

// leaf reports whether o holds no object values.
func leaf(o ordered) bool {
	for _, kv := range o {
		if _, ok := kv.v.(ordered); ok {
			return false
		}
	}
	return true
}

// plainScalar is a string YAML reads as that string unquoted.
var plainScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// flow writes v in YAML flow style.
func flow(v any) string {
	switch t := v.(type) {
	case ordered:
		parts := make([]string, len(t))
		for i, kv := range t {
			parts[i] = kv.k + ": " + flow(kv.v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = flow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		switch strings.ToLower(t) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~":
		default:
			if plainScalar.MatchString(t) {
				return t
			}
		}
		b, _ := marshalNoEscape(t)
		return strings.TrimSuffix(string(b), "\n")
	case json.Number:
		return t.String()
	case bool:
		return fmt.Sprint(t)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// spliceComponent replaces the generated component of the OpenAPI
// document doc (markers included).
func spliceComponent(doc, component []byte) ([]byte, error) {
	return splice(doc, component, componentBegin, componentEnd, "schemas/openapi.v1.yaml")
}
