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
	"github.com/fledger/fledger/events"
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
	// Warnings are non-fatal findings (unknown keys kept with
	// [AllowUnknownKeys] or read from a stored config), each with its path.
	Warnings []Problem
	// Format is the canonical format Canonical and Hash follow: the
	// current [CanonicalVersion] for a file, the stored one for a config
	// parsed with [Stored].
	Format int
}

// CanonicalVersion is the canonical format this build writes into
// ConfigApplied, as the canonical form's "canonicalVersion" key. Format 1
// (the first release) has no such key. A format's rendering never changes
// once released: a new config key goes into a new format, and a config
// stored in an older format is re-hashed with that format's rules (which
// leave the new key out), so every stored ConfigApplied keeps its hash.
//
// Format 3 adds auth.cooldowns.subscriptionBlockMaxMs and
// retry.provider.maxRetryDelayMs (issue 17); a format-1 or -2 config
// reads them as 0 (off), what it meant when it was stored. Format 4 adds
// failover.formatAdvances (issue 22); an older config reads it as false,
// the default, which only turns of rule revision 2 read.
const CanonicalVersion = 4

// Bounds on what a config file may say (not enforced on stored configs).
const (
	// MaxDurationMs bounds every duration: 366 days.
	MaxDurationMs int64 = 366 * 24 * 3600 * 1000
	// MaxCount bounds every count (retries, rotations, rounds, probes,
	// loop limits).
	MaxCount = 1000
	// MaxJitter bounds retry.provider.jitterMin and jitterMax.
	MaxJitter = 10.0
)

// Option changes how [Parse] and [LoadFile] read a config.
type Option func(*options)

type options struct {
	allowUnknown bool // unknown keys are warnings, not errors
	stored       bool // a canonical config read back from a ConfigApplied
}

// AllowUnknownKeys keeps unknown keys as warnings (the key is ignored)
// instead of errors: for a file written for a newer release (forward
// compatibility). `config check` and `config apply` turn it on with
// --allow-unknown-keys.
func AllowUnknownKeys() Option { return func(o *options) { o.allowUnknown = true } }

// Stored reads the canonical config of a stored ConfigApplied: history,
// not a file a user writes. A config without "canonicalVersion" is format
// 1, and each format is re-hashed with its own rules; unknown keys are
// warnings and the bounds a file is held to are not applied (the release
// that stored it accepted it, and replay must decide as that release
// did). The engine's fold and replay --verify read with it.
func Stored() Option {
	return func(o *options) { o.stored, o.allowUnknown = true, true }
}

// LoadFile reads and parses a config file (JSON or YAML, by content).
// Errors: an unreadable or oversize file, a YAML/JSON syntax error (with
// its line), or a [*ValidationError] wrapping [ErrInvalid].
func LoadFile(path string, opts ...Option) (*Loaded, error) {
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
	return Parse(data, path, opts...)
}

// Parse parses config text; source names it in errors. YAML is a superset
// of JSON, so both are accepted. Unknown keys and out-of-bounds durations
// and counts are errors unless opts say otherwise ([AllowUnknownKeys],
// [Stored]).
func Parse(data []byte, source string, opts ...Option) (*Loaded, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if len(data) > MaxFileBytes {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileBytes)}}}
	}
	// A key given twice is an error in a file a user writes (the last one
	// would silently win), and so is a second YAML document (the reader
	// takes only the first); stored history is read as it was written.
	toJSON := yaml.YAMLToJSONStrict
	if o.stored {
		toJSON = yaml.YAMLToJSON
	} else if p := utf8Problem(data); p != "" {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: p}}}
	} else if p := documentsProblem(data); p != "" {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: p}}}
	} else if p := trailingProblem(data); p != "" {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: p}}}
	} else if merges, p := mergeKeys(data); p != "" {
		return nil, &ValidationError{Source: source, Problems: []Problem{{Msg: "not valid YAML or JSON: " + p}}}
	} else if merges {
		// The strict reader counts a merged key written out again as
		// given twice; mergeKeys checked what it would have.
		toJSON = yaml.YAMLToJSON
	}
	js, err := toJSON(data)
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
	var unknown, shape, warnings, strays []Problem
	if p := dropSchemaKey(tree.(map[string]any)); p != nil {
		shape = append(shape, *p)
	}
	format, vp := canonicalFormat(tree.(map[string]any), o.stored)
	if vp != nil {
		// Check the rest as the current format.
		shape, format = append(shape, *vp), CanonicalVersion
	}
	checkShape(tree, fileType, "", &unknown, &shape)
	for _, u := range unknown {
		if o.allowUnknown {
			warnings = append(warnings, Problem{u.Path, "unknown key (ignored)" + u.Msg})
		} else {
			strays = append(strays, Problem{u.Path, "unknown key" + u.Msg})
		}
	}
	// Decode the cleaned tree (unknown keys and values of the wrong kind
	// removed), not the raw text, and check the rest: every problem of the
	// file is reported at once.
	clean, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var f File
	if err := json.Unmarshal(clean, &f); err != nil {
		return nil, &ValidationError{Source: source, Problems: append(append(strays, shape...), Problem{Msg: err.Error()})}
	}
	pc, problems := build(&f, !o.stored, format)
	if problems = append(append(strays, shape...), notUnder(shape, problems)...); len(problems) > 0 {
		return nil, &ValidationError{Source: source, Problems: problems}
	}
	if format >= 2 && pc.Defaults.Primary != (events.ModelRef{}) && pc.Defaults.Fallbacks == nil {
		// Format 2 writes "fallbacks": [] (format 1 wrote null, which the
		// schema refuses); an absent list means the same, so the policy
		// is the same after a round trip.
		pc.Defaults.Fallbacks = []events.ModelRef{}
	}
	canon, err := canonical(pc, format)
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
	return &Loaded{Policy: pc, Canonical: canon, Hash: pc.Hash, Warnings: warnings, Format: format}, nil
}

// dropSchemaKey removes a top-level "$schema" key: the JSON Schema an
// editor validates the file against (schemas/config.v1.json), which is no
// part of the config and changes neither its canonical form nor its hash.
// A "$schema" that is not a string is a problem (and removed too, so the
// rest of the file is checked).
func dropSchemaKey(top map[string]any) *Problem {
	v, ok := top["$schema"]
	if !ok {
		return nil
	}
	delete(top, "$schema")
	if _, ok := v.(string); !ok {
		return &Problem{"$schema", "expected a string (the JSON Schema editors validate the file against), got " + jsonKind(v)}
	}
	return nil
}

// SameAs reports whether a stored ConfigApplied (its hash and canonical
// config) records the config l is: the same hash, or, for a config stored
// in another canonical format, the same hash once the stored config is
// rendered in l's format. So an upgrade that changes the format does not
// re-apply an unchanged config (`serve`, `config apply`).
func (l *Loaded) SameAs(hash string, stored json.RawMessage) bool {
	if hash == l.Hash {
		return true
	}
	s, err := Parse(stored, "ConfigApplied "+hash, Stored())
	if err != nil || s.Hash != hash || s.Format == l.Format {
		return false
	}
	canon, err := canonical(s.Policy, l.Format)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(canon)
	return "sha256:"+hex.EncodeToString(sum[:]) == l.Hash
}

// canonicalFormat reads (and removes) the top-level "canonicalVersion"
// key: the format the config's canonical form and hash follow. In a file
// it may be absent (the current format) or the current format; a stored
// config without it is format 1, the first release's.
func canonicalFormat(top map[string]any, stored bool) (int, *Problem) {
	raw, ok := top["canonicalVersion"]
	delete(top, "canonicalVersion")
	if !ok || raw == nil {
		if stored {
			return 1, nil
		}
		return CanonicalVersion, nil
	}
	n, isNum := raw.(json.Number)
	v, err := n.Int64()
	if !isNum || err != nil {
		return 0, &Problem{"canonicalVersion", "expected a whole number, got " + jsonKind(raw)}
	}
	switch {
	case v == CanonicalVersion:
		return CanonicalVersion, nil
	case stored && v >= 1 && v < CanonicalVersion:
		return int(v), nil
	case v > CanonicalVersion:
		return 0, &Problem{"canonicalVersion", fmt.Sprintf("%d is newer than this build's canonical format %d; upgrade fledger", v, CanonicalVersion)}
	case v >= 1 && v < CanonicalVersion:
		return 0, &Problem{"canonicalVersion", fmt.Sprintf("format %d is read only from stored ConfigApplied events; a file is in format %d (or leave the key out)", v, CanonicalVersion)}
	}
	return 0, &Problem{"canonicalVersion", fmt.Sprintf("%d is not a canonical format (1 to %d)", v, CanonicalVersion)}
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
