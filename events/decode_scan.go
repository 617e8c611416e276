package events

import (
	"bytes"
	"strconv"
	"unsafe"
)

// scanCommit reads a commit in exactly the form the codec writes
// (marshalCommit and writeEnvelope: no white space, the envelope's fields
// in their order, optional ids left out, ASCII strings without escapes,
// times parseUTC takes, object payloads) without go-json: a rebuild spends
// a tenth of its CPU decoding envelopes, most of it in allocations (a
// string per field, a payload copy per event, the growing slice). Here a
// commit costs one copy of data (none when the caller owns data, see
// decodeOwned), which the envelopes' strings and the payloads are cut
// from. They never overlap: a payload is capped at its
// end, so appending to it cannot reach the bytes after it, and writing
// into it changes only its own bytes, never a string's.
//
// ok is false for anything else, and DecodeCommit then decodes data with
// go-json: the scanner only recognises, it never decides what a message
// means, so both decoders give the same events (decode_test.go checks it
// against encoding/json, FuzzDecodeCommit on any input). A payload is only
// delimited here (brackets matched outside strings); decoding it into its
// type validates it, and a payload that fails does so again on go-json's
// path, which reports it.
func scanCommit(data []byte, envs []wireEnvelope, owned bool) (c wireCommit, ok bool) {
	s := commitScanner{b: data}
	if s.lit(`{"basis":`) {
		if c.Basis, ok = s.uint(); !ok || !s.lit(`,`) {
			return c, false
		}
		if !s.lit(`"events":[`) {
			return c, false
		}
	} else if !s.lit(`{"events":[`) {
		return c, false
	}
	payloads := data
	if !owned {
		payloads = bytes.Clone(data)
	}
	s.str = unsafe.String(unsafe.SliceData(payloads), len(payloads))
	for {
		var w wireEnvelope
		if !s.envelope(&w, payloads) {
			return c, false
		}
		envs = append(envs, w)
		if s.lit(`,`) {
			continue
		}
		if !s.lit(`]}`) || s.i != len(s.b) {
			return c, false
		}
		c.Events = envs
		return c, true
	}
}

// commitScanner is scanCommit's position in b; str is a copy of b, which
// the scanned strings share (outside the payloads, see scanCommit).
type commitScanner struct {
	b   []byte
	i   int
	str string
}

// lit consumes lit when b continues with it.
func (s *commitScanner) lit(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// envelope reads one writeEnvelope object into w, its payload cut from
// payloads (a copy of b).
func (s *commitScanner) envelope(w *wireEnvelope, payloads []byte) bool {
	var ok bool
	if !s.lit(`{"id":`) {
		return false
	}
	if w.ID, ok = s.string(); !ok || !s.lit(`,"type":`) {
		return false
	}
	if w.Type, ok = s.string(); !ok || !s.lit(`,"schema_version":`) {
		return false
	}
	v, ok := s.uint()
	if !ok || v > 1<<31 || !s.lit(`,"at":`) {
		return false
	}
	w.SchemaVersion = int(v)
	start := s.i
	if _, ok = s.string(); !ok {
		return false
	}
	at, ok := parseUTC(s.b[start:s.i])
	if !ok || !s.lit(`,"agent":`) {
		return false
	}
	w.At = wireTime(at)
	if w.Agent, ok = s.string(); !ok || !s.lit(`,"aggregate":`) {
		return false
	}
	agg, ok := s.string()
	if !ok || !s.lit(`,"key":`) {
		return false
	}
	w.Aggregate = Aggregate(agg)
	if w.Key, ok = s.string(); !ok {
		return false
	}
	if s.lit(`,"causation_id":`) {
		if w.CausationID, ok = s.string(); !ok {
			return false
		}
	}
	if s.lit(`,"correlation_id":`) {
		if w.CorrelationID, ok = s.string(); !ok {
			return false
		}
	}
	if !s.lit(`,"payload":`) {
		return false
	}
	start = s.i
	if !s.object() {
		return false
	}
	w.Payload = payloads[start:s.i:s.i]
	return s.lit(`}`)
}

// string reads a JSON string of printable ASCII without escapes, the only
// kind it can share with b's string copy unchanged.
func (s *commitScanner) string() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.str[start:j], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return "", false
		}
	}
	return "", false
}

// uint reads a JSON number that is a non-negative integer fitting in a
// uint64, written without a leading zero.
func (s *commitScanner) uint() (uint64, bool) {
	j := s.i
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	if j == s.i || j-s.i > 1 && s.b[s.i] == '0' || j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.b[s.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	s.i = j
	return v, true
}

// object skips a JSON object by matching its brackets outside strings;
// it does not validate what lies between them. A string is skipped to
// its closing quote (one not escaped by an odd run of backslashes) with
// bytes.IndexByte.
func (s *commitScanner) object() bool {
	b := s.b
	if s.i >= len(b) || b[s.i] != '{' {
		return false
	}
	depth := 0
	for j := s.i; j < len(b); j++ {
		switch b[j] {
		case '"':
			for {
				q := bytes.IndexByte(b[j+1:], '"')
				if q < 0 {
					return false
				}
				j += 1 + q
				n := 0
				for b[j-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				if b[j] != '}' {
					return false
				}
				s.i = j + 1
				return true
			}
		}
	}
	return false
}
