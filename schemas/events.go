// Package schemas holds the JSON Schemas (2020-12) of fledger's event
// payloads — one file per type and version, schemas/events/<Type>.v<N>.json,
// generated from the Go payload structs by ./gen — and a validator for
// them.
package schemas

//go:generate go run ./gen

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/fledger/fledger/events"
)

//go:embed events/*.json
var eventFiles embed.FS

// EventFiles returns the event schema files; names are
// "events/<Type>.v<N>.json".
func EventFiles() fs.FS { return eventFiles }

// EventSchemaPath is the path in [EventFiles] (and in the repository,
// under schemas/) of typ's schema at version.
func EventSchemaPath(typ string, version int) string {
	return fmt.Sprintf("events/%s.v%d.json", typ, version)
}

// Validator validates event payloads against their schemas. It implements
// events.PayloadValidator (pass it to events.WithValidator). Safe for
// concurrent use. Schemas compile lazily on first use of each type/version.
type Validator struct {
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// NewValidator returns a validator over the embedded schema files.
func NewValidator() *Validator { return &Validator{compiled: map[string]*jsonschema.Schema{}} }

// FieldError is a payload that fails its schema. errors.Is(err,
// events.ErrInvalidPayload) is true.
type FieldError struct {
	Type    string
	Version int
	// Field is the offending field as a path, e.g. "profile_id" or
	// "chain/1/route_origin" ("" for the payload as a whole).
	Field string
	// Reason is the validator's message.
	Reason string
}

// Error names the type, version and field, and the validator's reason.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s v%d field %s: %s", e.Type, e.Version, e.Field, e.Reason)
}

// FieldPath returns Field (the store uses it to name the field).
func (e *FieldError) FieldPath() string { return e.Field }

// Unwrap returns events.ErrInvalidPayload.
func (e *FieldError) Unwrap() error { return events.ErrInvalidPayload }

func (v *Validator) schema(typ string, version int) (*jsonschema.Schema, error) {
	path := EventSchemaPath(typ, version)
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := v.compiled[path]; s != nil {
		return s, nil
	}
	b, err := eventFiles.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: no schema %s for %s v%d", events.ErrUnknownType, path, typ, version)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(path, doc); err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", path, err)
	}
	s, err := c.Compile(path)
	if err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", path, err)
	}
	v.compiled[path] = s
	return s, nil
}

// ValidatePayload validates payload (JSON) against typ's schema at
// version. It returns a *[FieldError] naming the first offending field, or
// an error wrapping events.ErrUnknownType when there is no such schema.
func (v *Validator) ValidatePayload(typ string, version int, payload []byte) error {
	s, err := v.schema(typ, version)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return &FieldError{Type: typ, Version: version, Reason: "not JSON: " + err.Error()}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &FieldError{Type: typ, Version: version, Reason: err.Error()}
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	loc := append([]string(nil), leaf.InstanceLocation...)
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		if len(k.Missing) > 0 {
			loc = append(loc, k.Missing[0])
		}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			loc = append(loc, k.Properties[0])
		}
	}
	msg := strings.TrimSpace(leaf.Error())
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	return &FieldError{Type: typ, Version: version, Field: strings.Join(loc, "/"), Reason: msg}
}

// Versions lists the versions that have a schema file for typ, ascending.
func Versions(typ string) []int {
	entries, _ := fs.Glob(eventFiles, "events/"+typ+".v*.json")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(e, "events/"+typ+".v"), ".json"))
		if err == nil {
			out = append(out, n)
		}
	}
	sortInts(out)
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
