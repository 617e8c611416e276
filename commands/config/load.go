package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"sigs.k8s.io/yaml"
)

// MaxFileBytes bounds a config file (4 MiB); a larger one is refused
// before parsing.
const MaxFileBytes = 4 << 20

// Loaded is a parsed, validated config.
type Loaded struct {
	// Policy is the policy's input, defaults applied; Policy.Hash == Hash.
	Policy policy.Config
	// Canonical is the config with every default made explicit, as compact
	// JSON with sorted keys: what ConfigApplied stores. Parse(Canonical)
	// gives back the same Policy and Hash.
	Canonical []byte
	// Hash is "sha256:<hex>" of Canonical.
	Hash string
	// Warnings are non-fatal findings (unknown keys), each with its path.
	Warnings []Problem
}

// LoadFile reads and parses a config file (JSON or YAML, by content).
// Errors: an unreadable or oversize file, a YAML/JSON syntax error (with
// its line), or a [*ValidationError] wrapping [ErrInvalid].
func LoadFile(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("config: %s is a directory, not a config file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse parses config text; source names it in errors. YAML is a superset
// of JSON, so both are accepted.
func Parse(data []byte, source string) (*Loaded, error) {
	if len(data) > MaxFileBytes {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileBytes)}}}
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: "not valid YAML or JSON: " + err.Error()}}}
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		js = []byte("{}")
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: "not valid YAML or JSON: " + err.Error()}}}
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: fmt.Sprintf("the top level must be a mapping, got %s", jsonKind(tree))}}}
	}
	var warnings, problems []Problem
	checkShape(tree, fileType, "", &warnings, &problems)
	if len(problems) > 0 {
		return nil, &ValidationError{Source: source, Problems: problems}
	}
	// Decode the cleaned tree (unknown keys removed), not the raw text.
	clean, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var f File
	if err := json.Unmarshal(clean, &f); err != nil {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: err.Error()}}}
	}
	pc, problems := build(&f)
	if len(problems) > 0 {
		return nil, &ValidationError{Source: source, Problems: problems}
	}
	canon, err := canonical(pc)
	if err != nil {
		return nil, fmt.Errorf("config: canonical form: %w", err)
	}
	sum := sha256.Sum256(canon)
	pc.Hash = "sha256:" + hex.EncodeToString(sum[:])
	if err := pc.Validate(); err != nil {
		// build checks everything Validate does; reaching this is a bug,
		// but report it as a config problem rather than panic.
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: strings.TrimPrefix(err.Error(), policy.ErrInvalidParams.Error()+": ")}}}
	}
	sort.Slice(warnings, func(i, j int) bool { return warnings[i].Path < warnings[j].Path })
	return &Loaded{Policy: pc, Canonical: canon, Hash: pc.Hash, Warnings: warnings}, nil
}

// Default returns the config with nothing set: POLICY.md defaults, no
// profiles, no models.
func Default() *Loaded {
	l, err := Parse([]byte("{}"), "default")
	if err != nil {
		panic(err) // the defaults are valid by construction (tested)
	}
	return l
}

// IsInvalid reports whether err is a config validation failure.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }
