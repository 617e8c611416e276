package events

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	fastjson "github.com/goccy/go-json"
)

// Upcaster turns a stored payload of version N into the same type's
// payload at version N+1 (JSON to JSON). It must be pure: replay depends on
// it giving the same output for the same input, forever.
type Upcaster func(payload json.RawMessage) (json.RawMessage, error)

// Registry maps event type names to their current schema version, Go
// payload type and upcasters. The codec refuses to write or read a type the
// registry does not know. A Registry is safe for concurrent use; register
// everything before the first append or read.
type Registry struct {
	mu    sync.RWMutex
	types map[string]*typeEntry
	// read is a copy of types for lookup, replaced when a type is added:
	// lookups run per decoded event on every read-ahead worker, and the
	// read lock's shared counter made them contend.
	read atomic.Pointer[map[string]*typeEntry]
}

type typeEntry struct {
	name    string
	version int
	goType  reflect.Type
	proto   Payload      // a value of goType: the method table box gives a decoded one
	boxable bool         // box may share a decoded value (see box)
	plan    *payloadPlan // nil: go-json decodes every payload
	req     *requiredSet // the fields every writer writes (required.go); nil: none
	agg     Aggregate
	up      map[int]Upcaster
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{types: map[string]*typeEntry{}} }

// NewCatalogRegistry returns a new registry holding every type of
// [Catalog] at its current version, with the upcasters from every earlier
// one (versions.go; version 1 unless listed there). Each call returns an
// independent registry, so a test may register a further version of a
// type without affecting others.
func NewCatalogRegistry() *Registry {
	r := NewRegistry()
	byType := map[string]Payload{}
	for _, p := range Catalog() {
		if err := r.Register(p, 1); err != nil {
			panic(err) // the catalog is static; a failure is a programming error
		}
		byType[p.EventType()] = p
	}
	if err := registerCurrentVersions(r, byType); err != nil {
		panic(err)
	}
	return r
}

// Register makes p's Go type (a struct type, passed by value) the current
// version of the event type p.EventType(). Registering a type again
// replaces its Go type and version and keeps its upcasters, which is how a
// new version is introduced: Register(v2{}, 2) plus
// RegisterUpcaster(name, 1, up). Errors wrap [ErrInvalidOption].
func (r *Registry) Register(p Payload, version int) error {
	if p == nil {
		return fmt.Errorf("%w: nil payload", ErrInvalidOption)
	}
	t := reflect.TypeOf(p)
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("%w: payload %s must be a struct passed by value", ErrInvalidOption, t)
	}
	name := p.EventType()
	if name == "" || version < 1 {
		return fmt.Errorf("%w: payload %s: empty type name or version %d < 1", ErrInvalidOption, t, version)
	}
	if !validAggregate(p.EventAggregate()) {
		return fmt.Errorf("%w: payload %s: aggregate %q is not a lower-case identifier", ErrInvalidOption, name, p.EventAggregate())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.types[name]
	if e == nil {
		e = &typeEntry{name: name, up: map[int]Upcaster{}}
		r.types[name] = e
		read := maps.Clone(r.types)
		r.read.Store(&read)
	}
	e.version, e.goType, e.agg = version, t, p.EventAggregate()
	e.proto, e.boxable, e.plan = p, t.Size() > unsafe.Sizeof(uintptr(0)), newPayloadPlan(t)
	e.req = buildRequired(t, 0)
	return nil
}

// RegisterUpcaster registers up to turn typ's payloads of version from into
// version from+1. Reading an event of version v < current applies the
// upcasters v, v+1, … in turn. Errors wrap [ErrInvalidOption].
func (r *Registry) RegisterUpcaster(typ string, from int, up Upcaster) error {
	if up == nil || from < 1 {
		return fmt.Errorf("%w: upcaster for %s from version %d", ErrInvalidOption, typ, from)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.types[typ]
	if e == nil {
		return fmt.Errorf("%w: upcaster for unregistered type %s", ErrInvalidOption, typ)
	}
	e.up[from] = up
	return nil
}

// Version returns typ's current schema version and whether it is
// registered.
func (r *Registry) Version(typ string) (int, bool) {
	e := r.lookup(typ)
	if e == nil {
		return 0, false
	}
	return e.version, true
}

// Types returns the registered type names, sorted.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.types))
	for n := range r.types {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (r *Registry) lookup(typ string) *typeEntry {
	if m := r.read.Load(); m != nil {
		return (*m)[typ]
	}
	return nil
}

// upcast brings raw from version v to the entry's current version.
func (e *typeEntry) upcast(raw json.RawMessage, v int) (json.RawMessage, error) {
	if v > e.version {
		return nil, fmt.Errorf("%w: schema_version: want %d or less (the newest %s version this fledger reads), found %d (written by a newer fledger)", ErrUpcast, e.version, e.name, v)
	}
	if v < 1 {
		found := fmt.Sprint(v)
		if v == 0 {
			found = "0 or no schema_version field"
		}
		return nil, fmt.Errorf("%w: schema_version: want 1 or more (the %s version the event was written at), found %s", ErrUpcast, e.name, found)
	}
	for ; v < e.version; v++ {
		up := e.up[v]
		if up == nil {
			return nil, fmt.Errorf("%w: no upcaster for %s from version %d to %d", ErrUpcast, e.name, v, v+1)
		}
		var err error
		if raw, err = up(raw); err != nil {
			return nil, fmt.Errorf("%w: %s version %d to %d: %v", ErrUpcast, e.name, v, v+1, err)
		}
	}
	return raw, nil
}

// decode unmarshals raw (at the current version) into a new value of the
// registered Go type (with go-json, see decode.go).
func (e *typeEntry) decode(raw json.RawMessage) (Payload, error) {
	return e.decodeFrom(raw, false)
}

// noCopyStrings is go-json's option for decodeFrom's shared strings.
var noCopyStrings = []fastjson.DecodeOptionFunc{fastjson.DecodeNoCopyString()}

// decodeFrom is decode; with shared, the payload's strings without
// escapes share raw instead of being copies (see decodeFast).
//
// The payload plan is tried first: an upcast payload (an event stored at an
// older version) is canonical JSON too, and the plan decodes it in one pass
// and checks its required fields with a bitmask (required.go); go-json and
// the required check's second parse are for what the plan does not take
// (decodeGoJSONPayload).
func (e *typeEntry) decodeFrom(raw []byte, shared bool) (Payload, error) {
	if e.plan != nil {
		v := reflect.New(e.goType)
		d := planDecoder{b: raw, shared: shared}
		if d.object(v.UnsafePointer(), e.plan) && d.i == len(raw) {
			return e.box(v), nil
		}
	}
	return e.decodeGoJSONPayload(raw, shared)
}

// decodeGoJSONPayload is decodeFrom without the plan: for a payload the
// plan has already refused (decodeFast) or that has none.
func (e *typeEntry) decodeGoJSONPayload(raw []byte, shared bool) (Payload, error) {
	v := reflect.New(e.goType)
	var err error
	if shared {
		err = fastjson.UnmarshalWithOption(raw, v.Interface(), noCopyStrings...)
	} else {
		err = fastjson.Unmarshal(raw, v.Interface())
	}
	if err != nil {
		return nil, err
	}
	if err := e.req.check(raw, "", false); err != nil {
		return nil, err
	}
	return e.box(v), nil
}

// box returns *v (a new value of the entry's type, which nothing else
// refers to) as a Payload. An interface holding a value larger than a
// pointer holds a pointer to an unchanging copy of it: v's memory is
// used as that copy, instead of v.Elem().Interface() allocating and
// copying another. A smaller type goes through reflect.
func (e *typeEntry) box(v reflect.Value) Payload {
	if !e.boxable {
		return v.Elem().Interface().(Payload)
	}
	p := e.proto
	(*iface)(unsafe.Pointer(&p)).data = v.UnsafePointer()
	return p
}

// iface is the layout of a non-empty interface value.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}
