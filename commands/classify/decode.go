package classify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fledger/fledger/internal/redact"
)

// MaxDecodedCauses is how many nested causes [ProviderError.UnmarshalJSON]
// decodes. The classifier follows 25 (reference §2.7); the few extra levels
// keep what a caller may inspect. Deeper causes are skipped in one linear
// pass, never parsed, and the outermost error gets CauseTruncated.
const MaxDecodedCauses = 32

// UnmarshalJSON accepts the flexible shapes described on [ProviderError].
// Unknown fields are ignored; field names match as encoding/json matches
// them (exact first, else case-insensitively; the last duplicate wins).
//
// The cost is linear in len(data) whatever the nesting: the object is read
// in a single pass, every nested cause is decoded in place (not re-validated
// and re-copied per level, which made a 5 000-deep cause take seconds), and
// causes deeper than [MaxDecodedCauses] are skipped bracket by bracket
// without recursion.
//
// encoding/json validates data before it calls UnmarshalJSON; called
// directly, this checks the structure it walks and the values it keeps,
// while skipped values (unknown fields, dropped causes) are only checked for
// balanced brackets and terminated strings.
func (e *ProviderError) UnmarshalJSON(data []byte) error {
	d := peDecoder{data: data}
	d.ws()
	if d.lit("null") {
		d.ws()
		if d.pos != len(d.data) {
			return d.errorf("unexpected data after null")
		}
		*e = ProviderError{}
		return nil
	}
	var out ProviderError
	if err := d.object(&out, 0); err != nil {
		return err
	}
	d.ws()
	if d.pos != len(d.data) {
		return d.errorf("unexpected data after the error object")
	}
	out.CauseTruncated, out.ignored = d.truncated, d.ignored
	*e = out
	return nil
}

// peDecoder reads one ProviderError object from data.
type peDecoder struct {
	data      []byte
	pos       int
	truncated bool
	ignored   []string // unknown keys, with their path
	// skip's bracket stack, one bit a level (1 = object), reused: 100 000
	// levels cost 12.5 KB.
	bits []uint64
}

func (d *peDecoder) errorf(format string, a ...any) error {
	return fmt.Errorf("provider error JSON at offset %d: %s", d.pos, fmt.Sprintf(format, a...))
}

func (d *peDecoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *peDecoder) peek() byte {
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *peDecoder) lit(s string) bool {
	if bytes.HasPrefix(d.data[d.pos:], []byte(s)) {
		d.pos += len(s)
		return true
	}
	return false
}

// The decoded fields, by canonical JSON name.
var peFields = []string{"id", "provider", "model", "status", "statusCode", "code", "type", "message", "body", "headers", "cause", "name", "received_at"}

// fieldName maps a JSON key to its field as encoding/json would: an exact
// match, else a case-insensitive one; "" for an unknown key.
func fieldName(key []byte) string {
	for _, f := range peFields {
		if string(key) == f { // no allocation
			return f
		}
	}
	for _, f := range peFields {
		if bytes.EqualFold(key, []byte(f)) {
			return f
		}
	}
	return ""
}

// statusCodeAlias reads statusCode, the status under the name Node HTTP
// clients and SDKs use (reference §2.7: "numeric status or statusCode"),
// once e's object ended: the status when e has none, whatever the keys'
// order; one that is no status (true, 1000, an object) is ignored like
// an unknown key, as it was before it was read, never a refused error.
func (d *peDecoder) statusCodeAlias(e *ProviderError, raw json.RawMessage, depth int) {
	if raw == nil || e.Status != 0 || e.statusCode != "" {
		return
	}
	var v ProviderError
	if err := v.setStatus("statusCode", raw); err != nil {
		if len(d.ignored) < maxIgnoredKeys {
			d.ignored = append(d.ignored, strings.Repeat("cause.", depth)+"statusCode")
		}
		return
	}
	e.Status, e.statusCode = v.Status, v.statusCode
}

// maxIgnoredKeys bounds [ProviderError.IgnoredKeys].
const maxIgnoredKeys = 8

// key reads an object key and returns its field name ("" when unknown)
// without allocating for an unescaped known key; an unknown one is noted
// (ignore) with the path of the object it is in.
func (d *peDecoder) key(depth int) (string, error) {
	start := d.pos
	if err := d.skipString(); err != nil {
		return "", err
	}
	inner := d.data[start+1 : d.pos-1]
	k := ""
	if bytes.IndexByte(inner, '\\') >= 0 {
		if err := json.Unmarshal(d.data[start:d.pos], &k); err != nil {
			return "", err
		}
		inner = []byte(k)
	}
	f := fieldName(inner)
	if f == "" && len(d.ignored) < maxIgnoredKeys {
		d.ignored = append(d.ignored, strings.Repeat("cause.", depth)+redact.Preview(string(inner), 40))
	}
	return f, nil
}

// object decodes the object at d.pos into e; depth is e's depth below the
// outermost error (0 for the outermost).
func (d *peDecoder) object(e *ProviderError, depth int) error {
	if d.peek() != '{' {
		return d.errorf("want an object")
	}
	d.pos++
	d.ws()
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	var statusCode json.RawMessage // read once the object ended (statusCodeAlias)
	for {
		d.ws()
		f, err := d.key(depth)
		if err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return d.errorf("want ':' after object key")
		}
		d.pos++
		d.ws()
		switch f {
		case "cause":
			if err := d.cause(e, depth); err != nil {
				return err
			}
		case "headers":
			if err := d.headers(e); err != nil {
				return err
			}
		default:
			start := d.pos
			if err := d.skip(); err != nil {
				return err
			}
			switch f {
			case "":
			case "statusCode":
				statusCode = json.RawMessage(d.data[start:d.pos])
			default:
				if err := e.setField(f, json.RawMessage(d.data[start:d.pos])); err != nil {
					return err
				}
			}
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.statusCodeAlias(e, statusCode, depth)
			return nil
		default:
			return d.errorf("want ',' or '}' in object")
		}
	}
}

// cause decodes e's cause: an object (decoded in place while depth allows,
// else skipped and recorded in d.truncated), a string (its message) or null.
func (d *peDecoder) cause(e *ProviderError, depth int) error {
	switch d.peek() {
	case 'n':
		if !d.lit("null") {
			return d.errorf("cause: invalid literal")
		}
		e.Cause = nil
		return nil
	case '"', '{':
	default:
		return d.errorf("cause: want an object or a string")
	}
	if depth >= MaxDecodedCauses {
		e.Cause = nil
		d.truncated = true
		return d.skip()
	}
	if d.peek() == '"' {
		s, err := d.str()
		if err != nil {
			return fmt.Errorf("cause: %w", err)
		}
		e.Cause = &ProviderError{Message: s}
		return nil
	}
	c := &ProviderError{}
	if err := d.object(c, depth+1); err != nil {
		return err
	}
	e.Cause = c
	return nil
}

// headers decodes the headers object into e.Headers (merging duplicates,
// as encoding/json does into a map).
func (d *peDecoder) headers(e *ProviderError) error {
	if d.lit("null") {
		return nil
	}
	if d.peek() != '{' {
		return d.errorf("headers: want an object")
	}
	d.pos++
	d.ws()
	if d.peek() == '}' {
		d.pos++
		return nil
	}
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	for {
		d.ws()
		key, err := d.str()
		if err != nil {
			return fmt.Errorf("headers: %w", err)
		}
		d.ws()
		if d.peek() != ':' {
			return d.errorf("headers: want ':' after key")
		}
		d.pos++
		d.ws()
		start := d.pos
		if err := d.skip(); err != nil {
			return fmt.Errorf("headers: %w", err)
		}
		raw := d.data[start:d.pos]
		if !validKept(raw) {
			return d.errorf("headers: invalid value for %q", truncate(key, 40))
		}
		e.Headers[key] = headerText(raw)
		d.ws()
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return nil
		default:
			return d.errorf("headers: want ',' or '}'")
		}
	}
}

// setField stores one scalar-ish field from its raw JSON value.
func (e *ProviderError) setField(f string, raw json.RawMessage) error {
	if !validKept(raw) {
		return fmt.Errorf("%s: invalid JSON value", f)
	}
	var err error
	switch f {
	case "id":
		e.ID, err = scalarText(f, raw)
	case "provider":
		e.Provider, err = scalarText(f, raw)
	case "model":
		e.Model, err = scalarText(f, raw)
	case "code":
		e.Code, err = scalarText(f, raw)
	case "type":
		e.Type, err = scalarText(f, raw)
	case "name":
		e.Name, err = scalarText(f, raw)
	case "status":
		e.Status, e.statusCode = 0, ""
		err = e.setStatus(f, raw)
	case "message", "body":
		if f == "message" {
			e.Message = anyText(raw)
		} else {
			e.Body = anyText(raw)
		}
	case "received_at":
		if s := string(bytes.TrimSpace(raw)); s != "" && s != "null" {
			if err := json.Unmarshal(raw, &e.ReceivedAt); err != nil {
				return fmt.Errorf("received_at: %w", err)
			}
		}
	}
	return err
}

// validKept reports whether a value we keep is valid JSON: one linear pass
// over a span no other kept field shares. Strings are checked where they
// are decoded.
func validKept(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '"' {
		return true
	}
	return json.Valid(raw)
}

// str decodes the JSON string at d.pos.
func (d *peDecoder) str() (string, error) {
	start := d.pos
	if err := d.skipString(); err != nil {
		return "", err
	}
	raw := d.data[start:d.pos]
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil // skipString rejected control bytes
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// skipString moves past the string at d.pos.
func (d *peDecoder) skipString() error {
	if d.peek() != '"' {
		return d.errorf("want a string")
	}
	for i := d.pos + 1; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '\\':
			i++
		case c == '"':
			d.pos = i + 1
			return nil
		case c < 0x20:
			d.pos = i
			return d.errorf("control character in string")
		}
	}
	d.pos = len(d.data)
	return d.errorf("unterminated string")
}

var errEmptyValue = errors.New("want a JSON value")

// skip moves past one JSON value, iteratively: strings are skipped whole,
// brackets must balance and match, everything else is passed over. Linear
// in the value's length at any nesting depth, with one bit of memory a
// level.
func (d *peDecoder) skip() error {
	depth := 0
	start := d.pos
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch c {
		case '"':
			if err := d.skipString(); err != nil {
				return err
			}
		case '{', '[':
			w, bit := depth/64, uint64(1)<<(depth%64)
			if w == len(d.bits) {
				d.bits = append(d.bits, 0)
			}
			if c == '{' {
				d.bits[w] |= bit
			} else {
				d.bits[w] &^= bit
			}
			depth++
			d.pos++
			continue
		case '}', ']':
			if depth == 0 {
				if d.pos == start {
					return d.errorf("%v", errEmptyValue)
				}
				return nil // the end of the enclosing object
			}
			depth--
			if isObj := d.bits[depth/64]&(uint64(1)<<(depth%64)) != 0; isObj != (c == '}') {
				return d.errorf("mismatched %q", c)
			}
			d.pos++
		default:
			if depth == 0 {
				// A top-level scalar: a number or literal ends at a delimiter.
				for d.pos < len(d.data) && !isDelim(d.data[d.pos]) {
					d.pos++
				}
				if d.pos == start {
					return d.errorf("%v", errEmptyValue)
				}
				return nil
			}
			d.pos++
			continue
		}
		if depth == 0 {
			return nil
		}
	}
	if depth > 0 || d.pos == start {
		return d.errorf("unexpected end of JSON")
	}
	return nil
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
		return true
	}
	return false
}
