package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeDetail turns a JSON decode error of a request body into words
// about the request's fields — never Go type or struct names:
// "body must be a JSON object", "attempt: expected an integer, got
// string", "error.headers: expected an object of strings, got array".
// v is the request being decoded.
func decodeDetail(err error, v any, raw []byte) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends inside a JSON value"
	case errors.As(err, &te):
		if te.Field == "" {
			return "body must be a JSON object, got " + gotKind(te.Value)
		}
		field := te.Field
		if _, ok := v.(*decisionsQuery); ok {
			// decisions.list's request embeds GET /v1/decisions's: its
			// fields are still top-level keys to the client.
			field = strings.TrimPrefix(field, "DecisionsRequest.")
		}
		// The lenient provider error is read through its own wire shape;
		// its fields are still error.<name> to the client.
		if _, ok := v.(*OutcomeRequest); ok && te.Struct != "OutcomeRequest" && !strings.HasPrefix(field, "error") {
			field = "error." + field
		}
		if isDecisionsRequest(v) && field == "since" {
			return fmt.Sprintf("since: expected an RFC 3339 time (a string), got %s; a stream sequence goes in from_seq", gotKind(te.Value))
		}
		return fmt.Sprintf("%s: expected %s, got %s", field, jsonKind(te.Type), gotKind(te.Value))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		// A key that is not UTF-8 is unknown as U+FFFD: say why.
		if ae := strictScan(raw, v, true); ae != nil {
			return ae.Detail
		}
		return msg
	}
	// The only custom decoder in a request is the provider error's
	// (OutcomeRequest.error): describe the field it refused by its path.
	if _, ok := v.(*OutcomeRequest); ok {
		if p := providerErrorShape(raw); p != "" {
			return p
		}
		return "error: " + msg
	}
	return msg
}

// isDecisionsRequest reports whether v is GET /v1/decisions's request, or
// decisions.list's.
func isDecisionsRequest(v any) bool {
	switch v.(type) {
	case *DecisionsRequest, *decisionsQuery:
		return true
	}
	return false
}

// providerErrorShape checks the shapes of the fields of an outcome
// report's "error" (as documented: status and code numbers or strings,
// message and body any JSON, headers an object, cause an object or a
// string) and describes the first one that is wrong ("" = none found).
func providerErrorShape(raw []byte) string {
	var top struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &top) != nil || len(top.Error) == 0 {
		return ""
	}
	if k := kindOf(top.Error); k != "object" && k != "null" {
		return "error: expected an object, got " + k
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(top.Error, &fields) != nil {
		return ""
	}
	want := func(name, expected string, ok ...string) string {
		v, present := fields[name]
		if !present {
			return ""
		}
		k := kindOf(v)
		for _, o := range append(ok, "null") {
			if k == o {
				return ""
			}
		}
		return fmt.Sprintf("error.%s: expected %s, got %s", name, expected, k)
	}
	for _, f := range []struct {
		name, expected string
		ok             []string
	}{
		{"status", `a number or a string (an HTTP status, or a status name such as "RESOURCE_EXHAUSTED", read as a code)`, []string{"number", "string"}},
		{"code", "a string or a number", []string{"string", "number", "boolean"}},
		{"type", "a string", []string{"string", "number", "boolean"}},
		{"name", "a string", []string{"string", "number", "boolean"}},
		{"id", "a string", []string{"string", "number", "boolean"}},
		{"provider", "a string", []string{"string", "number", "boolean"}},
		{"model", "a string", []string{"string", "number", "boolean"}},
		{"headers", "an object of strings", []string{"object"}},
		{"cause", "an object or a string", []string{"object", "string"}},
		{"received_at", "an RFC 3339 time string", []string{"string"}},
	} {
		if p := want(f.name, f.expected, f.ok...); p != "" {
			return p
		}
	}
	return ""
}

// kindOf names the JSON kind of a raw value: object, array, string,
// number, boolean, null.
func kindOf(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return "object"
		case '[':
			return "array"
		case '"':
			return "string"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		}
		return "number"
	}
	return "nothing"
}

// jsonKind names the JSON shape a Go type is read from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage" {
			return "a JSON value"
		}
		return "an array"
	}
	return "another value"
}

// gotKind shortens UnmarshalTypeError.Value ("number 1.5", "array").
func gotKind(v string) string {
	if v == "" {
		return "another value"
	}
	return v
}

// validJSONString reports whether the JSON string literal lit (starting
// at its opening quote) is UTF-8 once decoded: no byte sequence that is
// not UTF-8 and no \u escape of an unpaired surrogate.
func validJSONString(lit []byte) bool {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		var r rune
		for _, c := range b[:4] {
			switch {
			case '0' <= c && c <= '9':
				r = r<<4 | rune(c-'0')
			case 'a' <= c && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case 'A' <= c && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 1; i < len(lit); {
		c := lit[i]
		switch {
		case c == '"':
			return true
		case c == '\\' && i+1 < len(lit) && lit[i+1] == 'u':
			r, ok := hex4(lit[i+2:])
			if !ok {
				return true // the decoder refused it already
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || i+1 >= len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
					return false
				}
				r2, ok := hex4(lit[i+2:])
				if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
					return false
				}
				i += 6
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
	return true
}
