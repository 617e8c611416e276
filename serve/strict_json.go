package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/fledger/fledger/commands/classify"
)

// decodeRequest is the one request decoder of the HTTP API and the NATS
// micro service: data must be exactly one JSON object, read into v (a
// pointer to a request struct) with unknown fields refused, that passes
// [strictScan]. Empty data (or only white space) is an empty request
// unless required. Every refusal is 400 invalid_json.
func decodeRequest(data []byte, v any, required bool) *APIError {
	if len(bytes.TrimSpace(data)) == 0 {
		if required {
			return apiErr(http.StatusBadRequest, CodeInvalidJSON, "the request body is empty; a JSON object is required")
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err2 := dec.Token(); !errors.Is(err2, io.EOF) {
			err = errors.New("more than one JSON value in the body")
		}
	}
	if err != nil {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "%s", decodeDetail(err, v, data))
	}
	return strictScan(data, v, false)
}

// providerErrorType is the provider's own error in an outcome report,
// read leniently by its own decoder.
var providerErrorType = reflect.TypeOf(classify.ProviderError{})

// strictScan walks data — one JSON value encoding/json has read into v
// without error, so well formed and at most 10 000 levels deep — once, as
// a token stream beside v's Go type, and refuses what encoding/json lets
// through:
//   - a body that is not an object: null (read as "nothing given"), an
//     array, a scalar;
//   - a key given twice in one object, at any depth (encoding/json lets
//     the last win: {"ok":false,"ok":true} would be a success);
//   - a key that names a field only without regard to case ("SESSION"),
//     which encoding/json matches;
//   - a string that is not UTF-8 (raw bytes, or a \u escape of a lone
//     surrogate): encoding/json reads either as U+FFFD, so two different
//     ids would be stored as one.
//
// With utf8Only, only the last is checked (to explain an unknown key).
// The provider's error in an outcome report ([classify.ProviderError]) is
// read as its decoder documents: keys match without case (so two keys
// equal without case are one key given twice), strings need not be UTF-8
// (a provider's text arrives truncated mid character), and its free
// values (message, body, keys it does not read) are the provider's JSON,
// not checked. The cost is linear in len(data); the stack holds a frame
// per open container.
func strictScan(data []byte, v any, utf8Only bool) *APIError {
	type frame struct {
		t       reflect.Type // the Go type read from this container; nil = free JSON
		obj     bool
		lenient bool // inside the provider error
		wantKey bool
		key     string
		idx     int
		seen    keySet
	}
	var stack []frame
	// pointer is the JSON pointer of key in the innermost object.
	pointer := func(key string) string {
		var b strings.Builder
		for _, f := range stack[:len(stack)-1] {
			b.WriteByte('/')
			if f.obj {
				b.WriteString(pointerEscape(f.key))
			} else {
				b.WriteString(strconv.Itoa(f.idx))
			}
		}
		return b.String() + "/" + pointerEscape(key)
	}
	// name is the field path of the value in the innermost container
	// ("session", "profiles[1]", "body"), or (key) "a key in <path of that
	// container>".
	name := func(key bool) string {
		frames := stack
		if key {
			frames = stack[:len(stack)-1]
		}
		var b strings.Builder
		for _, f := range frames {
			if f.obj {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.idx)
			}
		}
		switch {
		case key && b.Len() == 0:
			return "a key"
		case key:
			return "a key in " + b.String()
		case b.Len() == 0:
			return "body"
		}
		return b.String()
	}
	// child is the Go type of the value about to be read in the top frame
	// (nil = free JSON) and whether it is read leniently.
	child := func() (reflect.Type, bool) {
		if len(stack) == 0 {
			return reflect.TypeOf(v), false
		}
		f := &stack[len(stack)-1]
		if f.t == nil {
			return nil, f.lenient
		}
		t := deref(f.t)
		switch {
		case t == providerErrorType:
			switch strings.ToLower(f.key) {
			case "cause":
				return providerErrorType, true
			case "headers":
				return reflect.TypeFor[map[string]string](), true
			}
			return nil, true
		case t.Kind() == reflect.Struct:
			return jsonFields(t)[f.key], f.lenient
		case t.Kind() == reflect.Map, t.Kind() == reflect.Slice, t.Kind() == reflect.Array:
			return t.Elem(), f.lenient
		}
		return nil, f.lenient
	}
	value := func() {
		if n := len(stack); n > 0 {
			if f := &stack[n-1]; f.obj {
				f.wantKey = true
			} else {
				f.idx++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // encoding/json read it already
		}
		end := dec.InputOffset()
		if d, ok := tok.(json.Delim); len(stack) == 0 && !utf8Only && (!ok || d != '{') {
			return apiErr(http.StatusBadRequest, CodeInvalidJSON, "body must be a JSON object, got %s", kindOf(data))
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				ct, lenient := child()
				if ct != nil && deref(ct) == providerErrorType {
					lenient = true
				}
				stack = append(stack, frame{t: ct, obj: t == '{', wantKey: t == '{', lenient: lenient})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			var f *frame
			if n := len(stack); n > 0 {
				f = &stack[n-1]
			}
			key := f != nil && f.obj && f.wantKey
			if f == nil || !f.lenient {
				lit := data[start:end]
				if q := bytes.IndexByte(lit, '"'); q >= 0 && !validJSONString(lit[q:]) {
					return apiErr(http.StatusBadRequest, CodeInvalidJSON, "%s: not valid UTF-8 (string at byte %d); every string must be UTF-8", name(key), start+int64(q))
				}
			}
			if !key {
				value()
				break
			}
			if ae := strictKey(f.t, f.lenient, &f.seen, t, pointer); ae != nil && !utf8Only {
				return ae
			}
			f.key, f.wantKey = t, false
			if ct, lenient := child(); ct == nil && lenient {
				// The provider's free JSON: not checked, read in one step.
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return nil
				}
				value()
			}
		default:
			value()
		}
		if len(stack) == 0 {
			return nil
		}
	}
}

// strictKey refuses key in an object read into t (nil = free JSON, not
// checked): given before (seen, folded when lenient), or naming a field of
// struct t only without regard to case.
func strictKey(t reflect.Type, lenient bool, seen *keySet, key string, pointer func(string) string) *APIError {
	if t == nil {
		return nil
	}
	if !seen.add(foldKey(key, lenient)) {
		return apiErr(http.StatusBadRequest, CodeInvalidJSON, "key %q is given twice (at %s); a key may appear once in an object", key, pointer(key))
	}
	if st := deref(t); !lenient && st.Kind() == reflect.Struct {
		if _, ok := jsonFields(st)[key]; !ok {
			for name := range jsonFields(st) {
				if strings.EqualFold(name, key) {
					return apiErr(http.StatusBadRequest, CodeInvalidJSON, "key %q (at %s) is not a field; keys are case-sensitive: the field is %q", key, pointer(key), name)
				}
			}
		}
	}
	return nil
}

// keySet is the keys seen in one object: a slice while small (no map
// allocated for the usual handful of keys), a map beyond.
type keySet struct {
	list []string
	set  map[string]struct{}
}

// add adds key and reports whether it was new.
func (k *keySet) add(key string) bool {
	if k.set != nil {
		if _, ok := k.set[key]; ok {
			return false
		}
		k.set[key] = struct{}{}
		return true
	}
	for _, s := range k.list {
		if s == key {
			return false
		}
	}
	k.list = append(k.list, key)
	if len(k.list) > 16 {
		k.set = make(map[string]struct{}, 2*len(k.list))
		for _, s := range k.list {
			k.set[s] = struct{}{}
		}
		k.list = nil
	}
	return true
}

func foldKey(key string, lenient bool) string {
	if lenient {
		return strings.ToLower(key)
	}
	return key
}

// pointerEscape escapes a key as a JSON pointer reference token (RFC 6901).
func pointerEscape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps the JSON names of struct t's fields (as encoding/json
// reads them: tag name, else the Go name; "-" skipped; embedded structs
// without a tag flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" && deref(sf.Type).Kind() == reflect.Struct {
			for k, ft := range jsonFields(deref(sf.Type)) {
				if _, dup := m[k]; !dup {
					m[k] = ft
				}
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		m[name] = sf.Type
	}
	fieldCache.Store(t, m)
	return m
}
