package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
)

// Markers delimiting the generated part of docs/events.md.
const (
	beginMarker = "<!-- BEGIN GENERATED CATALOG (go generate ./schemas) -->"
	endMarker   = "<!-- END GENERATED CATALOG -->"
)

// schemaBase is the one base of every schema's $id
// (https://fledger.dev/schemas/<file>); idBase prefixes the event schemas'.
const (
	schemaBase = "https://fledger.dev/schemas/"
	idBase     = schemaBase + "events/"
)

type output struct {
	schemas map[string][]byte // file name under schemas/events/ -> content
	stored  map[string][]byte // file name under schemas/ -> content
	// component is the OpenAPI DecisionRecord component (YAML, markers
	// included) for schemas/openapi.v1.yaml.
	component []byte
	catalog   []byte // markdown for docs/events.md
}

// docs holds doc comments from the events sources: "Type" and "Type.Field".
type docs map[string]string

func parseDocs(dir string) (docs, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	d := docs{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					d[ts.Name.Name] = clean(doc)
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fld := range st.Fields.List {
						text := clean(fld.Doc)
						if text == "" {
							text = clean(fld.Comment)
						}
						for _, n := range fld.Names {
							d[ts.Name.Name+"."+n.Name] = text
						}
					}
				}
			}
		}
	}
	return d, nil
}

func clean(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.Join(strings.Fields(cg.Text()), " ")
}

// schema is one JSON Schema node; field order is the output order.
type schema struct {
	Schema      string    `json:"$schema,omitempty"`
	ID          string    `json:"$id,omitempty"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Ref         string    `json:"$ref,omitempty"`
	Type        any       `json:"type,omitempty"`
	Const       any       `json:"const,omitempty"`
	Format      string    `json:"format,omitempty"`
	Enum        []string  `json:"enum,omitempty"`
	Pattern     string    `json:"pattern,omitempty"`
	Minimum     *int      `json:"minimum,omitempty"`
	PrefixItems []*schema `json:"prefixItems,omitempty"`
	Items       *schema   `json:"items,omitempty"`
	MinItems    *int      `json:"minItems,omitempty"`
	MaxItems    *int      `json:"maxItems,omitempty"`
	Properties  *props    `json:"properties,omitempty"`
	Required    []string  `json:"required,omitempty"`
	// AdditionalProperties is false or a *schema.
	AdditionalProperties any    `json:"additionalProperties,omitempty"`
	Defs                 *props `json:"$defs,omitempty"`
	// AllOf, If and Then select a payload's schema in the envelope.
	AllOf []*schema `json:"allOf,omitempty"`
	If    *schema   `json:"if,omitempty"`
	Then  *schema   `json:"then,omitempty"`
}

type prop struct {
	name string
	s    *schema
}

// props is an ordered map of schemas.
type props []prop

func (p props) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(e.name)
		if err != nil {
			return nil, err
		}
		v, err := marshalNoEscape(e.s)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape is json.Marshal without HTML escaping ("<" stays "<").
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// field describes one payload field for the docs table.
type field struct {
	name, typ, unit, desc string
	required              bool
}

// builder turns Go types into schemas, collecting named struct types as
// $defs.
type builder struct {
	d      docs
	defs   map[string]*schema
	order  []string
	fields map[string][]field // struct type name -> its fields, for docs
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage(nil))
	timeType   = reflect.TypeOf(time.Time{})
)

func (b *builder) structSchema(t reflect.Type) (*schema, error) {
	s := &schema{Type: "object", AdditionalProperties: false}
	var ps props
	var docFields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if f.Anonymous {
			return nil, fmt.Errorf("%s.%s: embedded fields are not supported", t.Name(), f.Name)
		}
		omit := strings.Contains(","+opts+",", ",omitempty,")
		fs, typ, err := b.typeSchema(f.Type, !omit)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		if strings.Contains(","+opts+",", ",string,") {
			if fs, typ, err = quotedSchema(f.Type); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
			}
		}
		if e := f.Tag.Get("enum"); e != "" {
			if fs.Type != "string" {
				return nil, fmt.Errorf("%s.%s: enum tag on a non-string field", t.Name(), f.Name)
			}
			if e == "reason" {
				fs.Enum = events.Spellings(events.Reasons)
				typ = "string (a failover reason)"
			} else {
				fs.Enum = strings.Split(e, "|")
				typ = "string: " + strings.Join(fs.Enum, " \\| ")
			}
		}
		desc := fieldDoc(b.d, t.Name(), f.Name, name)
		unit := unitOf(t.Name(), name, f.Type, desc)
		full := desc
		if unit != "" {
			full = strings.TrimSpace(full + " Unit: " + unit + ".")
		}
		fs.Description = full // a sibling of $ref is allowed in 2020-12
		ps = append(ps, prop{name, fs})
		if !omit {
			s.Required = append(s.Required, name)
		}
		docFields = append(docFields, field{name: name, typ: typ, unit: unit, desc: desc, required: !omit})
	}
	s.Properties = &ps
	b.fields[t.Name()] = docFields
	return s, nil
}

// typeSchema returns the schema of a Go type and its docs type string.
// nullable: the field has no omitempty, so a nil slice, map or pointer is
// encoded as null.
func (b *builder) typeSchema(t reflect.Type, nullable bool) (*schema, string, error) {
	switch t {
	case rawMessage:
		return &schema{Type: "object"}, "object (JSON)", nil
	case timeType:
		return &schema{Type: "string", Format: "date-time"}, "string (RFC 3339)", nil
	}
	switch t.Kind() {
	case reflect.String:
		return &schema{Type: "string"}, "string", nil
	case reflect.Bool:
		return &schema{Type: "boolean"}, "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schema{Type: "integer"}, "integer", nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		zero := 0
		return &schema{Type: "integer", Minimum: &zero}, "integer ≥ 0", nil
	case reflect.Slice:
		is, it, err := b.typeSchema(t.Elem(), false)
		if err != nil {
			return nil, "", err
		}
		s := &schema{Type: "array", Items: is}
		if nullable {
			s.Type = []string{"array", "null"}
		}
		return s, "array of " + it, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, "", errors.New("map keys must be strings")
		}
		vs, vt, err := b.typeSchema(t.Elem(), false)
		if err != nil {
			return nil, "", err
		}
		s := &schema{Type: "object", AdditionalProperties: vs}
		if nullable {
			s.Type = []string{"object", "null"}
		}
		return s, "object of " + vt, nil
	case reflect.Pointer:
		s, st, err := b.typeSchema(t.Elem(), false)
		if err != nil {
			return nil, "", err
		}
		if nullable {
			return nil, "", errors.New("a pointer field needs omitempty (null is not allowed)")
		}
		return s, st, nil
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return nil, "", errors.New("anonymous structs are not supported")
		}
		if _, ok := b.defs[name]; !ok {
			b.defs[name] = nil // placeholder against recursion
			s, err := b.structSchema(t)
			if err != nil {
				return nil, "", err
			}
			s.Description = b.d[name]
			b.defs[name] = s
			b.order = append(b.order, name)
		}
		return &schema{Ref: "#/$defs/" + name}, "[" + name + "](#" + strings.ToLower(name) + ")", nil
	}
	return nil, "", fmt.Errorf("unsupported kind %s", t.Kind())
}

// uint64Pattern is a uint64 written as a decimal string: digits, no sign,
// no leading zero, at most 20 digits (the reader refuses a value above
// 18446744073709551615).
const uint64Pattern = "^(0|[1-9][0-9]{0,19})$"

// quotedSchema is the schema of a field with the ",string" option: an
// integer written as a JSON string, so that readers whose numbers are
// float64 (JavaScript, jq) read it exactly (issue 19). Only uint64 uses it.
func quotedSchema(t reflect.Type) (*schema, string, error) {
	if t.Kind() != reflect.Uint64 {
		return nil, "", fmt.Errorf("the string option is only supported on uint64, not %s", t.Kind())
	}
	return &schema{Type: "string", Pattern: uint64Pattern}, "string: a decimal integer from 0 to 18446744073709551615", nil
}

// unitOf infers a field's unit from its JSON name, Go type and doc.
func unitOf(typeName, jsonName string, t reflect.Type, desc string) string {
	n := strings.ToLower(jsonName)
	switch {
	case typeName == "AttemptFailed" && jsonName == "request_size_ceiling":
		return "tokens"
	case strings.HasSuffix(n, "_ms") || strings.HasSuffix(jsonName, "Ms"):
		return "milliseconds (duration)"
	case t.Kind() == reflect.Int64 && (strings.HasSuffix(n, "_at") || strings.HasSuffix(n, "_until") ||
		strings.HasSuffix(n, "expiry") || n == "last_used" || strings.Contains(desc, "Unix ms")):
		return "Unix milliseconds, UTC (0 or absent = unset)"
	case (n == "status" || strings.HasSuffix(n, "_status")) && t.Kind() == reflect.Int:
		return "HTTP status code"
	case strings.HasSuffix(n, "seed") && t.Kind() == reflect.Uint64:
		return "PRNG seed"
	}
	return ""
}

// generate builds every current-version event schema file, the schemas of
// the stored forms and the decision record, and the docs section.
// eventSchemas is the directory of the event schema files (the envelope
// schema names every one there).
func generate(eventsDir, eventSchemas string) (*output, error) {
	d, err := parseDocs(eventsDir)
	if err != nil {
		return nil, err
	}
	reg := events.NewCatalogRegistry()
	out := &output{schemas: map[string][]byte{}}
	var md bytes.Buffer
	md.WriteString(beginMarker + "\n\n")
	md.WriteString("<!-- Do not edit this section: it is written from the Go payload structs in events/ by `go generate ./schemas`. -->\n\n")
	allFields := map[string][]field{}
	var valueTypes []string
	seenValue := map[string]bool{}
	var lastAgg events.Aggregate
	for _, p := range events.Catalog() {
		t := reflect.TypeOf(p)
		name := p.EventType()
		version, _ := reg.Version(name)
		b := &builder{d: d, defs: map[string]*schema{}, fields: map[string][]field{}}
		s, err := b.structSchema(t)
		if err != nil {
			return nil, err
		}
		file := fmt.Sprintf("%s.v%d.json", name, version)
		s.Schema = "https://json-schema.org/draft/2020-12/schema"
		s.ID = idBase + file
		s.Title = fmt.Sprintf("%s v%d", name, version)
		s.Description = strings.TrimSpace(d[t.Name()] + fmt.Sprintf(" Aggregate: %s.", p.EventAggregate()))
		if len(b.order) > 0 {
			defs := props{}
			for _, n := range b.order {
				defs = append(defs, prop{n, b.defs[n]})
			}
			s.Defs = &defs
		}
		if out.schemas[file], err = indented(s); err != nil {
			return nil, err
		}

		for _, n := range b.order {
			if !seenValue[n] {
				seenValue[n] = true
				valueTypes = append(valueTypes, n)
				allFields[n] = b.fields[n]
			}
		}
		if agg := p.EventAggregate(); agg != lastAgg {
			fmt.Fprintf(&md, "### Aggregate `%s`\n\n", agg)
			lastAgg = agg
		}
		fmt.Fprintf(&md, "#### %s\n\n", name)
		fmt.Fprintf(&md, "Version %d · aggregate `%s` · schema [`schemas/events/%s`](../schemas/events/%s)\n\n", version, p.EventAggregate(), file, file)
		if doc := d[t.Name()]; doc != "" {
			md.WriteString(doc + "\n\n")
		}
		writeTable(&md, b.fields[t.Name()])
	}
	sort.Strings(valueTypes)
	md.WriteString("### Value types\n\nStructured values used inside payloads (`$defs` in the schemas).\n\n")
	for _, n := range valueTypes {
		fmt.Fprintf(&md, "#### %s\n\n", n)
		if doc := d[n]; doc != "" {
			md.WriteString(doc + "\n\n")
		}
		writeTable(&md, allFields[n])
	}
	md.WriteString(endMarker + "\n")
	out.catalog = md.Bytes()

	files, err := filepath.Glob(filepath.Join(eventSchemas, "*.v*.json"))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for f := range out.schemas {
		names[f] = true
	}
	for _, f := range files {
		names[filepath.Base(f)] = true
	}
	stored, err := storedSchemas(d, slices.Collect(maps.Keys(names)))
	if err != nil {
		return nil, err
	}
	out.stored = map[string][]byte{}
	for name, s := range stored {
		if out.stored[name], err = indented(s); err != nil {
			return nil, err
		}
	}
	if out.component, err = decisionComponent(out.stored[decisionFile]); err != nil {
		return nil, err
	}
	return out, nil
}

// indented is s as a schema file: two-space indented JSON, "<" unescaped.
func indented(s *schema) ([]byte, error) {
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return js.Bytes(), nil
}

func writeTable(md *bytes.Buffer, fs []field) {
	md.WriteString("| field | type | required | unit | meaning |\n|---|---|---|---|---|\n")
	for _, f := range fs {
		req := ""
		if f.required {
			req = "yes"
		}
		desc := strings.ReplaceAll(f.desc, "|", "\\|")
		fmt.Fprintf(md, "| `%s` | %s | %s | %s | %s |\n", f.name, f.typ, req, f.unit, desc)
	}
	md.WriteString("\n")
}

// spliceCatalog replaces the generated section of doc (markers included).
func spliceCatalog(doc, catalog []byte) ([]byte, error) {
	return splice(doc, catalog, beginMarker, endMarker, "docs/events.md")
}

// splice replaces the part of doc from the line holding begin through the
// line holding end (markers included) with part; name names doc in the
// error when a marker is missing.
func splice(doc, part []byte, begin, end, name string) ([]byte, error) {
	i := bytes.Index(doc, []byte(begin))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		return nil, fmt.Errorf("%s lacks the markers %q … %q", name, begin, end)
	}
	j += len(end)
	if j < len(doc) && doc[j] == '\n' {
		j++
	}
	var b bytes.Buffer
	b.Write(doc[:i])
	b.Write(part)
	b.Write(doc[j:])
	return b.Bytes(), nil
}
