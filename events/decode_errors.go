package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	fastjson "github.com/goccy/go-json"
)

// A stored message that cannot be decoded is named to its reader in the
// terms of the stored JSON, never of the Go types it is decoded into: the
// JSON path of the offending value (events[2].payload.jitter_seed, or
// "body" for the whole message), what a fledger commit holds there and
// what the message holds instead, its value cut to [shownBytes]. The
// decoder's own error stays reachable with errors.As.

// shownBytes is how much of an offending value a message shows; longer
// values end in "…".
const shownBytes = 64

// WireError is the cause of a [DecodeError] for a message that is not
// a well-formed commit: where, what was wanted and what was found.
type WireError struct {
	// Path is the offending value's JSON path: "body" (the whole
	// message), "events", "events[0].at", "events[2].payload.jitter_seed".
	Path string
	// Want says what a fledger commit holds there, Found what the message
	// holds (kind and value, cut to 64 bytes).
	Want, Found string
	// Err is the decoder's error.
	Err error
}

// Error is "<path>: want <what>, found <what>".
func (e *WireError) Error() string {
	return e.Path + ": want " + e.Want + ", found " + e.Found
}

// Unwrap returns the decoder's error.
func (e *WireError) Unwrap() error { return e.Err }

// What a commit holds where; the words of WireError.Want.
const (
	wantCommit    = `a JSON object (the commit envelope {"basis": …, "events": […]})`
	wantEvents    = "a JSON array of one or more event envelopes"
	wantEnvelope  = "a JSON object (an event envelope)"
	wantTime      = `an RFC 3339 time string (e.g. "2026-01-15T10:00:00Z")`
	wantJSONValue = "a JSON value"
)

// commitError explains why data is not a commit: err is go-json's error
// decoding it as one, nil when it decoded but holds no events.
func commitError(data []byte, err error) error {
	var se *fastjson.SyntaxError
	var te *fastjson.UnmarshalTypeError
	switch {
	case err == nil:
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || top == nil {
			return &WireError{Path: "body", Want: wantCommit, Found: found(data), Err: errors.New("commit holds no events")}
		}
		evs, ok := field(top, "events")
		if !ok {
			return &WireError{Path: "events", Want: wantEvents, Found: "no events field", Err: errors.New("commit holds no events")}
		}
		return &WireError{Path: "events", Want: wantEvents, Found: found(evs), Err: errors.New("commit holds no events")}
	case errors.As(err, &se):
		return syntaxError(data, se)
	case errors.As(err, &te):
		path, want := "body", wantCommit
		switch {
		case te.Field == "events":
			path, want = "events", wantEvents
		case te.Field != "":
			segs := strings.Split(te.Field, ".")
			path = jsonPath(segs)
			want = wantOf(te.Type, false)
			if len(segs) == 2 {
				want = wantEnvelope
			}
		}
		return &WireError{Path: path, Want: want, Found: found(valueAt(data, strings.Split(te.Field, "."))), Err: err}
	}
	// A custom decoder refused a value (an envelope's "at"): find it.
	if i, at, ok := badTime(data); ok {
		return &WireError{Path: fmt.Sprintf("events[%d].at", i), Want: wantTime, Found: found(at), Err: err}
	}
	return &WireError{Path: "body", Want: wantCommit, Found: found(data), Err: err}
}

// payloadError explains why the payload raw of event i, of type t, did not
// decode into t: err is go-json's error.
func payloadError(i int, typ string, t reflect.Type, raw []byte, err error) error {
	prefix := fmt.Sprintf("events[%d].payload", i)
	var me *missingFieldError
	if errors.As(err, &me) {
		return missingError(prefix, typ, me)
	}
	var te *fastjson.UnmarshalTypeError
	if !errors.As(err, &te) {
		var se *fastjson.SyntaxError
		if errors.As(err, &se) {
			e := syntaxError(raw, se)
			e.Path = prefix
			return e
		}
		return &WireError{Path: prefix, Want: "a " + typ + " payload", Found: found(raw) + " (" + cutText(err.Error()) + ")", Err: err}
	}
	if te.Field == "" {
		return &WireError{Path: prefix, Want: "a JSON object (the " + typ + " payload)", Found: found(raw), Err: err}
	}
	segs := strings.Split(te.Field, ".")
	quoted := false
	if f, ok := structField(t, segs); ok {
		_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		quoted = hasOption(opts, "string")
	}
	return &WireError{Path: prefix + "." + jsonPath(segs), Want: wantOf(te.Type, quoted), Found: found(valueAt(raw, segs)), Err: err}
}

// syntaxError names where data stops being JSON and shows how it begins.
func syntaxError(data []byte, se *fastjson.SyntaxError) *WireError {
	if len(trimSpace(data)) == 0 {
		return &WireError{Path: "body", Want: wantCommit, Found: "nothing (an empty message)", Err: se}
	}
	off := min(max(int(se.Offset), 0), len(data))
	f := fmt.Sprintf("%s at byte %d of %d: %s", strings.TrimPrefix(se.Error(), "json: "), off, len(data), shown(data))
	return &WireError{Path: "body", Want: "valid JSON", Found: f, Err: se}
}

// badTime finds the first envelope whose "at" is not a time: its index
// and value.
func badTime(data []byte) (int, []byte, bool) {
	var c struct {
		Events []map[string]json.RawMessage `json:"events"`
	}
	if json.Unmarshal(data, &c) != nil {
		return 0, nil, false
	}
	for i, ev := range c.Events {
		at, ok := field(ev, "at")
		if !ok {
			continue
		}
		var t wireTime
		if t.UnmarshalJSON(at) != nil {
			return i, at, true
		}
	}
	return 0, nil, false
}

// jsonPath writes go-json's field path ("events.0.id", "chain.1.model")
// as a JSON path: events[0].id, chain[1].model.
func jsonPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		if _, err := strconv.Atoi(s); err == nil && i > 0 {
			b.WriteString("[" + s + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// valueAt returns the raw JSON value at path segs in data (an object key,
// matched as the decoder does: exactly, else without regard to case, the
// last duplicate winning; or an array index), nil when there is none.
func valueAt(data []byte, segs []string) []byte {
	v := json.RawMessage(data)
	for _, s := range segs {
		if s == "" {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) == nil && obj != nil {
			if v, _ = field(obj, s); v == nil {
				return nil
			}
			continue
		}
		var arr []json.RawMessage
		n, err := strconv.Atoi(s)
		if err != nil || json.Unmarshal(v, &arr) != nil || n < 0 || n >= len(arr) {
			return nil
		}
		v = arr[n]
	}
	return v
}

// field is obj's value for the key name, matched as the decoder does.
func field(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	return lookupKey(obj, name)
}

// structField follows segs (JSON names and array indices) through t to
// the struct field the last one names.
func structField(t reflect.Type, segs []string) (reflect.StructField, bool) {
	var f reflect.StructField
	for _, s := range segs {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if _, err := strconv.Atoi(s); err == nil {
			continue
		}
		if t.Kind() != reflect.Struct {
			return f, false
		}
		ok := false
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			if strings.EqualFold(name, s) {
				f, t, ok = sf, sf.Type, true
				if name == s {
					break
				}
			}
		}
		if !ok {
			return f, false
		}
	}
	return f, true
}

// hasOption reports whether a json tag's options (after the name) hold o.
func hasOption(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// wantOf says what JSON a value of Go type t is read from; quoted: a
// number or boolean written as a JSON string (the ",string" option).
func wantOf(t reflect.Type, quoted bool) string {
	if t == nil {
		return wantJSONValue
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[wireTime]() {
		return wantTime
	}
	s := wantJSONValue
	switch t.Kind() {
	case reflect.String:
		s = "a string"
	case reflect.Bool:
		s = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		s = fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s = fmt.Sprintf("an unsigned integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		s = "a number"
	case reflect.Struct, reflect.Map:
		s = "a JSON object"
	case reflect.Slice, reflect.Array:
		s = "a JSON array"
	}
	if quoted {
		s += ` written as a JSON string (e.g. "42")`
	}
	return s
}

// found names raw's JSON kind and shows it, cut to shownBytes: `a number
// -1`, `a string "x"`, `an array [1,2,…`, `null`; "nothing" for none.
func found(raw []byte) string {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	kind := "a number"
	switch raw[0] {
	case '{':
		kind = "an object"
	case '[':
		kind = "an array"
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "a boolean"
	case 'n':
		if string(raw) == "null" {
			return "null"
		}
	}
	return kind + " " + shown(raw)
}

// cutText is s cut to shownBytes at a character boundary, with "…" when
// cut: a value of the message quoted in an error (an envelope's type,
// aggregate or agent can be as long as the message).
func cutText(s string) string {
	if len(s) <= shownBytes {
		return s
	}
	cut := shownBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shown is b cut to shownBytes on a UTF-8 boundary, with "…" when cut;
// bytes that are not UTF-8 or not printable are escaped.
func shown(b []byte) string {
	if len(b) <= shownBytes {
		return printable(b)
	}
	cut := shownBytes
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return printable(b[:cut]) + "…"
}

// printable is b as is when it is printable UTF-8, else quoted.
func printable(b []byte) string {
	s := string(b)
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		q := strconv.Quote(s)
		return q[1 : len(q)-1]
	}
	return s
}

// trimSpace drops JSON white space around b.
func trimSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// foundText is a WireError's Found for an envelope string field: the
// value quoted and cut to 64 bytes; "" is also what an absent field
// decodes to.
func foundText(v, field string) string {
	if v == "" {
		return `"" or no ` + field + ` field`
	}
	return fmt.Sprintf("%q", cutText(v))
}

// wantType is a WireError's Want for an unknown event type.
func (r *Registry) wantType() string {
	ts := r.Types()
	if len(ts) == 0 {
		return "an event type this fledger reads (it reads none)"
	}
	return fmt.Sprintf("one of the %d event types this fledger reads (e.g. %s)", len(ts), ts[0])
}
