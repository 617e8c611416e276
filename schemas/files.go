package schemas

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// IDBase is the base of every schema's $id: a file schemas/<path> has
// $id IDBase+<path>, e.g. https://fledger.dev/schemas/events/TurnStarted.v2.json.
const IDBase = "https://fledger.dev/schemas/"

// The schemas of the files users write and of the stored forms:
// config.v1.json, scenario.v1.json, envelope.v1.json, commit.v1.json and
// decision-record.v1.json.
//
//go:embed *.json
var topFiles embed.FS

// Files returns every schema file, by its path under schemas/:
// "<name>.v<N>.json" and "events/<Type>.v<N>.json".
func Files() map[string][]byte {
	out := map[string][]byte{}
	for _, fsys := range []fs.FS{topFiles, eventFiles} {
		_ = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out[path], _ = fs.ReadFile(fsys, path)
			}
			return err
		})
	}
	return out
}

// compiler is a compiler holding every schema file under its $id, so
// references between them (the envelope's to the event schemas) resolve
// without a network; formats (date-time) are asserted.
var compiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for path, b := range Files() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schemas: %s: %w", path, err)
		}
		if err := c.AddResource(IDBase+path, doc); err != nil {
			return nil, fmt.Errorf("schemas: %s: %w", path, err)
		}
	}
	return c, nil
})

var (
	compileMu sync.Mutex
	compiled  = map[string]*jsonschema.Schema{}
)

// Compile returns the compiled schema of the file at path under schemas/
// (e.g. "decision-record.v1.json", "commit.v1.json",
// "events/FallbackStepped.v1.json"). Safe for concurrent use.
func Compile(path string) (*jsonschema.Schema, error) {
	c, err := compiler()
	if err != nil {
		return nil, err
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	if s := compiled[path]; s != nil {
		return s, nil
	}
	s, err := c.Compile(IDBase + path)
	if err != nil {
		return nil, fmt.Errorf("schemas: %s: %w", path, err)
	}
	compiled[path] = s
	return s, nil
}

// Validate validates the JSON document doc against the schema file at
// path (see [Compile]).
func Validate(path string, doc []byte) error {
	s, err := Compile(path)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("schemas: not JSON: %w", err)
	}
	return s.Validate(inst)
}
