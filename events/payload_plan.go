package events

import (
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"unicode/utf8"
	"unsafe"

	fastjson "github.com/goccy/go-json"
)

// A payloadPlan decodes one payload type from the JSON the codec writes
// (json.Marshal of the same type: compact, every key a field's exact name
// at most once, no null) straight into a new value, without go-json and
// in the same pass that finds the payload's end (decodeFast). It takes
// only what it is sure to decode as go-json does, and reports anything
// else (another key, a duplicate, white space, null, a number that is
// not a plain integer in range, an invalid UTF-8 string, a \u escape of
// a surrogate, …) as not taken: the payload is then decoded by go-json,
// whose result or error stands (payload_plan_test.go, FuzzPayloadPlan
// and FuzzDecodeFast compare both). A type with a field of another kind,
// an embedded field, its own UnmarshalJSON or UnmarshalText, or a json
// tag the plan does not read gets no plan: its payloads always go to
// go-json.
type payloadPlan struct {
	typ    reflect.Type
	fields []planField
	// required has bit i set when fields[i] is required (fieldRequired):
	// an object without it is not taken (required.go).
	required uint64
}

// planKind is how a field is decoded.
type planKind uint8

const (
	planString       planKind = iota // string (any string kind)
	planBool                         // bool
	planInt                          // int or int64 (8 bytes)
	planUint64String                 // uint64 with the ",string" option
	planStrings                      // []string
	planInt64s                       // []int64
	planStringIntMap                 // map[string]int
	planStruct                       // a struct value with a plan
	planStructPtr                    // a pointer to a struct with a plan
	planStructSlice                  // a slice of structs with a plan
)

type planField struct {
	name   string
	quoted string // `"name":`
	off    uintptr
	kind   planKind
	sub    *payloadPlan // planStruct, planStructPtr, planStructSlice
	typ    reflect.Type // the field's type
}

var (
	typeStrings         = reflect.TypeFor[[]string]()
	typeInt64s          = reflect.TypeFor[[]int64]()
	typeStringIntMap    = reflect.TypeFor[map[string]int]()
	typeJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	typeGoJSONContext   = reflect.TypeFor[fastjson.UnmarshalerContext]()
	typeTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// customDecoded reports whether t or *t decodes itself.
func customDecoded(t reflect.Type) bool {
	for _, u := range []reflect.Type{typeJSONUnmarshaler, typeGoJSONContext, typeTextUnmarshaler} {
		if t.Implements(u) || reflect.PointerTo(t).Implements(u) {
			return true
		}
	}
	return false
}

// newPayloadPlan returns t's plan, or nil when t has none (see
// payloadPlan).
func newPayloadPlan(t reflect.Type) *payloadPlan {
	return compilePlan(t, 0)
}

func compilePlan(t reflect.Type, depth int) *payloadPlan {
	if t.Kind() != reflect.Struct || depth > 4 || customDecoded(t) || t.NumField() > 64 {
		return nil
	}
	p := &payloadPlan{typ: t}
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		tag, hasTag := f.Tag.Lookup("json")
		if !f.IsExported() {
			continue
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !hasTag || name == "" {
			name = f.Name
		}
		if !plainName(name) || names[strings.ToLower(name)] {
			// Names alike but for case would make an exact match depend
			// on go-json's choice between them.
			return nil
		}
		names[strings.ToLower(name)] = true
		pf := planField{name: name, quoted: `"` + name + `":`, off: f.Offset, typ: f.Type}
		ft := f.Type
		if customDecoded(ft) {
			return nil
		}
		asString := false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "", "omitempty", "omitzero":
			case "string":
				asString = true
			default:
				return nil
			}
		}
		switch {
		case asString:
			if ft.Kind() != reflect.Uint64 {
				return nil
			}
			pf.kind = planUint64String
		case ft.Kind() == reflect.String:
			pf.kind = planString
		case ft.Kind() == reflect.Bool:
			pf.kind = planBool
		case (ft.Kind() == reflect.Int || ft.Kind() == reflect.Int64) && ft.Size() == 8:
			pf.kind = planInt
		case ft == typeStrings:
			pf.kind = planStrings
		case ft == typeInt64s:
			pf.kind = planInt64s
		case ft == typeStringIntMap:
			pf.kind = planStringIntMap
		case ft.Kind() == reflect.Struct:
			pf.kind, pf.sub = planStruct, compilePlan(ft, depth+1)
		case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && !customDecoded(ft.Elem()):
			pf.kind, pf.sub = planStructPtr, compilePlan(ft.Elem(), depth+1)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !customDecoded(ft.Elem()):
			pf.kind, pf.sub = planStructSlice, compilePlan(ft.Elem(), depth+1)
		default:
			return nil
		}
		if pf.kind >= planStruct && pf.sub == nil {
			return nil
		}
		if fieldRequired(opts) {
			p.required |= 1 << len(p.fields)
		}
		p.fields = append(p.fields, pf)
	}
	return p
}

// plainName reports whether a JSON name is letters, digits and '_' only
// (the catalog's), which the plan compares byte for byte.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return s != ""
}

// planDecoder is a plan's position in b. With shared, a string without
// escapes shares b's memory (see decodeFast), else it is a copy.
type planDecoder struct {
	b      []byte
	i      int
	shared bool
}

// object decodes a JSON object into the struct at p, of the plan's type
// (zero on entry).
func (d *planDecoder) object(p unsafe.Pointer, plan *payloadPlan) bool {
	b := d.b
	if d.i+1 >= len(b) || b[d.i] != '{' {
		return false
	}
	d.i++
	if b[d.i] == '}' {
		d.i++
		return plan.required == 0
	}
	var seen uint64
	next := 0
	fields := plan.fields
	for {
		// json.Marshal writes the fields in their order, leaving some
		// out: the key is looked for from the field after the last one,
		// as the whole `"name":` (a key equal to it has no escape).
		k := -1
		rest := b[d.i:]
		for n := 0; n < len(fields); n++ {
			j := next + n
			if j >= len(fields) {
				j -= len(fields)
			}
			if q := fields[j].quoted; len(rest) > len(q) && string(rest[:len(q)]) == q {
				k = j
				d.i += len(q)
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		next = k + 1
		if !d.field(unsafe.Add(p, fields[k].off), &fields[k]) {
			return false
		}
		if more, ok := d.after('}'); !more {
			return ok && seen&plan.required == plan.required
		}
	}
}

// field decodes one value into the field at p.
func (d *planDecoder) field(p unsafe.Pointer, f *planField) bool {
	switch f.kind {
	case planString:
		s, ok := d.string()
		*(*string)(p) = s
		return ok
	case planBool:
		switch {
		case d.lit("true"):
			*(*bool)(p) = true
		case d.lit("false"):
		default:
			return false
		}
		return true
	case planInt:
		v, ok := d.int()
		*(*int64)(p) = v
		return ok
	case planUint64String:
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return false
		}
		d.i++
		v, ok := d.uint()
		if !ok || d.i >= len(d.b) || d.b[d.i] != '"' {
			return false
		}
		d.i++
		*(*uint64)(p) = v
		return true
	case planStrings, planInt64s:
		return d.scalars(p, f.kind)
	case planStringIntMap:
		if d.i+1 >= len(d.b) || d.b[d.i] != '{' {
			return false
		}
		d.i++
		m := map[string]int{}
		*(*map[string]int)(p) = m
		if d.b[d.i] == '}' {
			d.i++
			return true
		}
		for {
			k, ok := d.string()
			if !ok || d.i >= len(d.b) || d.b[d.i] != ':' {
				return false
			}
			d.i++
			v, ok := d.int()
			if !ok {
				return false
			}
			if int64(int(v)) != v {
				return false // overflows int (32-bit builds): go-json's error
			}
			m[k] = int(v) // a duplicate key: the last wins, as with go-json
			if more, ok := d.after('}'); !more {
				return ok
			}
		}
	case planStruct:
		return d.object(p, f.sub)
	case planStructPtr:
		v := reflect.New(f.sub.typ)
		*(*unsafe.Pointer)(p) = v.UnsafePointer()
		return d.object(v.UnsafePointer(), f.sub)
	case planStructSlice:
		s := reflect.MakeSlice(f.typ, 0, 4)
		size := f.sub.typ.Size()
		more, ok := d.arrayStart()
		for more && ok {
			n := s.Len()
			if n == s.Cap() {
				grown := reflect.MakeSlice(f.typ, n, 2*n)
				reflect.Copy(grown, s)
				s = grown
			}
			s = s.Slice(0, n+1)
			if ok = d.object(unsafe.Add(s.UnsafePointer(), uintptr(n)*size), f.sub); ok {
				more, ok = d.arrayNext()
			}
		}
		reflect.NewAt(f.typ, p).Elem().Set(s)
		return ok
	}
	return false
}

// scalars reads a JSON array of strings (planStrings) or integers
// (planInt64s) into the slice at p; an empty one is an empty slice, not
// nil, as with go-json. (No function value: d would escape.)
func (d *planDecoder) scalars(p unsafe.Pointer, kind planKind) bool {
	var strs []string
	var ints []int64
	more, ok := d.arrayStart()
	for more && ok {
		if kind == planStrings {
			var v string
			v, ok = d.string()
			strs = append(strs, v)
		} else {
			var v int64
			v, ok = d.int()
			ints = append(ints, v)
		}
		if ok {
			more, ok = d.arrayNext()
		}
	}
	if kind == planStrings {
		if strs == nil {
			strs = []string{}
		}
		*(*[]string)(p) = strs
	} else {
		if ints == nil {
			ints = []int64{}
		}
		*(*[]int64)(p) = ints
	}
	return ok
}

// arrayStart consumes a JSON array's '[' and reports whether an element
// follows; arrayNext, after an element, consumes ',' (more) or ']'.
func (d *planDecoder) arrayStart() (more, ok bool) {
	if d.i+1 >= len(d.b) || d.b[d.i] != '[' {
		return false, false
	}
	d.i++
	if d.b[d.i] == ']' {
		d.i++
		return false, true
	}
	return true, true
}

func (d *planDecoder) arrayNext() (more, ok bool) { return d.after(']') }

// after consumes, after a value, the ',' before another (more) or the
// closing bracket (ok, not more); anything else is neither.
func (d *planDecoder) after(closing byte) (more, ok bool) {
	if d.i >= len(d.b) {
		return false, false
	}
	switch d.b[d.i] {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, false
}

// lit consumes lit when b continues with it.
func (d *planDecoder) lit(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return true
}

// int reads a JSON integer that fits in an int64, without fraction or
// exponent.
func (d *planDecoder) int() (int64, bool) {
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	v, ok := d.uint()
	switch {
	case !ok:
		return 0, false
	case neg && v <= 1<<63:
		return -int64(v), true
	case !neg && v < 1<<63:
		return int64(v), true
	}
	return 0, false
}

// uint reads digits without a leading zero, not followed by a fraction or
// an exponent, that fit in a uint64.
func (d *planDecoder) uint() (uint64, bool) {
	b, j := d.b, d.i
	var v uint64
	for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		c := uint64(b[j] - '0')
		if v > (1<<64-1-c)/10 {
			return 0, false
		}
		v = v*10 + c
	}
	if j == d.i || j-d.i > 1 && b[d.i] == '0' || j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, false
	}
	d.i = j
	return v, true
}

// string reads a JSON string of valid UTF-8 whose escapes, if any, are
// not surrogates (which go-json pairs or replaces).
func (d *planDecoder) string() (string, bool) {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	ascii := true
	for j := start; ; j++ {
		if j = plainRun(b, j); j >= len(b) {
			return "", false
		}
		switch c := b[j]; {
		case c == '"':
			d.i = j + 1
			lit := b[start:j]
			if !ascii && !utf8.Valid(lit) {
				return "", false
			}
			if len(lit) == 0 {
				return "", true
			}
			if d.shared {
				return unsafe.String(&lit[0], len(lit)), true
			}
			return string(lit), true
		case c == '\\':
			return d.escaped(start, j)
		case c < 0x20:
			return "", false
		default: // >= 0x80
			ascii = false
		}
	}
}

// plainRun returns the index of the first byte from j on that is '"',
// '\\', a control character or not ASCII (len(b) if none), eight bytes
// at a time.
func plainRun(b []byte, j int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; j+8 <= len(b); j += 8 {
		w := binary.LittleEndian.Uint64(b[j:])
		q, bs := w^(lo*'"'), w^(lo*'\\')
		// A byte of q or bs is 0 at a quote or a backslash; the lowest
		// flagged byte is exact (borrows only reach bytes above it).
		if m := ((q-lo)&^q | (bs-lo)&^bs | (w-lo*0x20)&^w | w) & hi; m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
	}
	for ; j < len(b); j++ {
		if c := b[j]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return j
		}
	}
	return j
}

// escaped reads the rest of a string from its first escape at j; the
// result is new memory.
func (d *planDecoder) escaped(start, j int) (string, bool) {
	b := d.b
	out := make([]byte, 0, j-start+16)
	out = append(out, b[start:j]...)
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			d.i = j + 1
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return "", false
		}
		switch b[j+1] {
		case '"', '\\', '/':
			out = append(out, b[j+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(b) {
				return "", false
			}
			r := rune(0)
			for _, h := range b[j+2 : j+6] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			j += 6
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}
