// Package apispec checks the HTTP contract, schemas/openapi.v1.yaml: it
// lints the document (kin-openapi's validation plus the project's own
// rules) and validates live responses against it. It is imported by tests
// only.
package apispec

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"
)

// Load reads an OpenAPI document from its YAML text with every local
// $ref resolved (external references are refused).
func Load(raw []byte) (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("apispec: load: %w", err)
	}
	return doc, nil
}

// camelCase is the form of an operationId: a lower-case letter, then
// letters and digits.
var camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// methods are the operation keys of a path item.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Lint returns every problem of the OpenAPI document raw (YAML), sorted;
// none means it is clean. Beside kin-openapi's own validation (examples,
// defaults and patterns checked), the rules are:
//   - no null value anywhere: in a YAML flow mapping an unquoted
//     `description: What was wrong, in words` makes a key "in words" with
//     the value null;
//   - every operation has an operationId, camelCase and unique;
//   - every local $ref resolves (and no $ref leaves the document);
//   - every schema property and every parameter has a description;
//   - no property name contains white space;
//   - no property of a request body (at any depth, through $refs) has a
//     default: a generator (openapi-typescript without flags) types a
//     property with a default as required, so a client built with default
//     options would have to send it; "absent = X" goes in the description.
func Lint(raw []byte) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return []string{"yaml: " + err.Error()}
	}
	var tree any
	if err := json.Unmarshal(js, &tree); err != nil {
		return []string{"json: " + err.Error()}
	}
	walk(tree, "#", func(ptr string, v any) {
		switch v := v.(type) {
		case nil:
			add("%s: null value (quote a flow mapping's text that holds a comma)", ptr)
		case map[string]any:
			lintNode(tree, ptr, v, add)
		}
	})
	lintOperations(tree, add)
	lintRequestDefaults(tree, add)
	if doc, err := Load(raw); err != nil {
		add("kin-openapi: %v", err)
	} else if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaDefaultsValidation(), openapi3.EnableSchemaPatternValidation()); err != nil {
		add("kin-openapi: %v", err)
	}
	sort.Strings(problems)
	return problems
}

// lintNode applies the rules that look at one object of the document: its
// $ref, its properties (when it is a schema) and, when it is a parameter,
// its description.
func lintNode(root any, ptr string, m map[string]any, add func(string, ...any)) {
	if ref, ok := m["$ref"].(string); ok {
		if !strings.HasPrefix(ref, "#/") {
			add("%s: $ref %q is not a local reference", ptr, ref)
		} else if _, ok := resolve(root, ref); !ok {
			add("%s: $ref %q does not resolve", ptr, ref)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok && isSchema(ptr) {
		for name, p := range props {
			at := ptr + "/properties/" + escape(name)
			if strings.ContainsAny(name, " \t\n") {
				add("%s: property name %q has white space", at, name)
			}
			if d, _ := p.(map[string]any)["description"].(string); d == "" {
				add("%s: property has no description", at)
			}
		}
	}
	if _, isParam := m["in"]; isParam && m["name"] != nil && isParameter(ptr) {
		if d, _ := m["description"].(string); d == "" {
			add("%s: parameter %v has no description", ptr, m["name"])
		}
	}
}

// lintOperations checks every operation's operationId.
func lintOperations(root any, add func(string, ...any)) {
	paths, _ := root.(map[string]any)["paths"].(map[string]any)
	seen := map[string]string{}
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, method := range methods {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			at := "#/paths/" + escape(p) + "/" + method
			id, _ := op["operationId"].(string)
			switch {
			case id == "":
				add("%s: no operationId", at)
			case !camelCase.MatchString(id):
				add("%s: operationId %q is not camelCase", at, id)
			}
			if first, dup := seen[id]; dup && id != "" {
				add("%s: operationId %q is also %s's", at, id, first)
			} else {
				seen[id] = at
			}
		}
	}
}

// lintRequestDefaults reports every property with a default in the
// schema of an operation's request body, following $refs, properties and
// items (each schema once).
func lintRequestDefaults(root any, add func(string, ...any)) {
	seen := map[string]bool{}
	var visit func(ptr string, v any)
	visit = func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
			if seen[ref] {
				return
			}
			seen[ref] = true
			if target, ok := resolve(root, ref); ok {
				visit(ref, target)
			}
			return
		}
		props, _ := m["properties"].(map[string]any)
		for _, name := range sortedKeys(props) {
			at := ptr + "/properties/" + escape(name)
			if p, ok := props[name].(map[string]any); ok {
				if _, has := p["default"]; has {
					add("%s: a request body property has a default (a generator then types it required); say \"absent = …\" in its description", at)
				}
			}
			visit(at, props[name])
		}
		for _, k := range []string{"items", "additionalProperties"} {
			visit(ptr+"/"+k, m[k])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			list, _ := m[k].([]any)
			for i, x := range list {
				visit(ptr+"/"+k+"/"+strconv.Itoa(i), x)
			}
		}
	}
	paths, _ := root.(map[string]any)["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, method := range methods {
			op, _ := item[method].(map[string]any)
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			for _, ct := range sortedKeys(content) {
				media, _ := content[ct].(map[string]any)
				visit("#/paths/"+escape(p)+"/"+method+"/requestBody/content/"+escape(ct)+"/schema", media["schema"])
			}
		}
	}
}

// isSchema reports whether the object at ptr is a schema (so its
// "properties" are property schemas): it sits under a "schema" or
// "schemas" key, or below another schema's keywords.
func isSchema(ptr string) bool {
	return strings.Contains(ptr, "/schema") // schema, schemas, and everything below them
}

// isParameter reports whether the object at ptr is a parameter object.
func isParameter(ptr string) bool {
	parent := ptr[:strings.LastIndex(ptr, "/")]
	return strings.HasSuffix(parent, "/parameters") && !isSchema(ptr)
}

// walk calls f on every value of the tree, with its JSON pointer, parents
// first.
func walk(v any, ptr string, f func(string, any)) {
	f(ptr, v)
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			walk(v[k], ptr+"/"+escape(k), f)
		}
	case []any:
		for i, x := range v {
			walk(x, ptr+"/"+strconv.Itoa(i), f)
		}
	}
}

// resolve follows a local JSON pointer ("#/components/schemas/X").
func resolve(root any, ref string) (any, bool) {
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// escape is a JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
