package events

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// decodeFast decodes a commit in exactly the form the codec writes
// (marshalCommit and writeEnvelope: no white space, the envelope's fields
// in their order, optional ids left out, ASCII strings without escapes,
// times parseUTC takes, object payloads) in one pass and without go-json
// for the envelopes: each envelope is scanned by hand and its payload
// decoded into its registered type straight from its bytes.
//
// ok is false for anything else, and for any failure on the way (an
// unknown type, another agent or aggregate, a payload its type refuses,
// an upcast that fails): DecodeCommit then decodes data again with
// go-json (decodeGoJSON), which gives the result or the error. The fast
// path only recognises, it never decides what a message means, so both
// give the same events (decode_fast_test.go compares them on every
// commit of the fixture ledgers and scenarios, FuzzDecodeFast on any
// input).
//
// Memory. Type and Aggregate are the registry's strings and Agent the
// subject's, shared by every event. With owned false (DecodeCommit, whose
// callers may reuse data and keep events for long: the engine's fold)
// the other envelope strings (id, key, causation, correlation), the
// payloads and the payloads' strings are copies of their own, as go-json
// makes them: an event, or one string of it, kept for long keeps no more
// memory than its own. With owned true (decodeOwned: the read-ahead
// workers, which own the NATS client's message once the fetcher handed
// it over) nothing is copied: the envelope strings, the payloads and the
// payloads' strings without escapes share data, so any of them kept
// alive keeps the whole message alive (about a kilobyte). The readers
// that use it are Read, ReadSubject and ReadRange: rebuilds, replay,
// exports and the engine's look-ups of a turn's or the config's commits,
// which drop the events after use. The engine's long-lived state is
// folded from Follow, which decodes with DecodeCommit; a projection's
// bounded cache keeps at most its bound of rows' messages alive.
//
// The events are appended to dst; on failure dst is returned as it was.
func (r *Registry) decodeFast(dst []Event, data []byte, seq uint64, subject string, owned bool) ([]Event, bool) {
	n0 := len(dst)
	fail := func() ([]Event, bool) {
		clear(dst[n0:])
		return dst[:n0], false
	}
	s := commitScanner{b: data}
	var basis uint64
	if s.lit(`{"basis":`) {
		var ok bool
		if basis, ok = s.uint(); !ok || !s.lit(`,"events":[`) {
			return dst, false
		}
	} else if !s.lit(`{"events":[`) {
		return dst, false
	}
	agent, err := subjectAgent(subject)
	if err != nil {
		return dst, false
	}
	types := r.read.Load()
	if types == nil {
		return dst, false
	}
	for i := 0; ; i++ {
		dst = append(dst, Event{Seq: seq, Index: i, Basis: basis})
		if !s.envelope(&dst[n0+i], *types, agent, owned) {
			return fail()
		}
		if s.lit(`,`) {
			continue
		}
		if !s.lit(`]}`) || s.i != len(data) {
			return fail()
		}
		break
	}
	if !owned {
		ownEnvelopes(dst[n0:])
	}
	return dst, true
}

// decodeFastCopy is decodeFast, not owned, into a slice of its own, exactly as long
// as the commit's events (gathered in a pooled one first).
func (r *Registry) decodeFastCopy(data []byte, seq uint64, subject string) ([]Event, bool) {
	scratch := eventScratch.Get().(*[]Event)
	evs, ok := r.decodeFast((*scratch)[:0], data, seq, subject, false)
	var out []Event
	if ok {
		out = make([]Event, len(evs))
		copy(out, evs)
		clear(evs)
	}
	*scratch = evs[:0]
	eventScratch.Put(scratch)
	return out, ok
}

// eventScratch holds the slices decodeFast gathers a commit's events in
// before it knows their number (the result is a copy of exactly that
// length); they are cleared before they are put back.
var eventScratch = sync.Pool{New: func() any { s := make([]Event, 0, 16); return &s }}

// ownEnvelopes replaces the envelope strings and payloads of evs, which
// share the caller's data, with copies of their own, as go-json makes
// them: an event kept for long (the engine keeps turns' events and
// aggregate keys) keeps no more memory than its own. A string equal to
// one already copied shares it (a turn's key is its correlation id).
func ownEnvelopes(evs []Event) {
	var seen [4]string
	k := 0
	own := func(s string) string {
		if s == "" {
			return ""
		}
		for _, p := range seen {
			if p == s {
				return p
			}
		}
		c := strings.Clone(s)
		seen[k%len(seen)] = c
		k++
		return c
	}
	for i := range evs {
		e := &evs[i]
		e.ID, e.Key = own(e.ID), own(e.Key)
		e.CausationID, e.CorrelationID = own(e.CausationID), own(e.CorrelationID)
		e.Payload = bytes.Clone(e.Payload)
	}
}

// commitScanner is decodeFast's position in b.
type commitScanner struct {
	b []byte
	i int
}

// lit consumes lit when b continues with it.
func (s *commitScanner) lit(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// envelope reads one writeEnvelope object into ev and decodes its
// payload; agent is the subject's. Strings and the payload share b (see
// decodeFast); the payload's strings do too when owned.
func (s *commitScanner) envelope(ev *Event, types map[string]*typeEntry, agent string, owned bool) bool {
	var ok bool
	if !s.lit(`{"id":`) {
		return false
	}
	if ev.ID, ok = s.string(); !ok || !s.lit(`,"type":`) {
		return false
	}
	typ, ok := s.bytes()
	if !ok || !s.lit(`,"schema_version":`) {
		return false
	}
	e := types[string(typ)]
	if e == nil {
		return false
	}
	ev.Type = e.name
	v, ok := s.uint()
	if !ok || v > 1<<31 || !s.lit(`,"at":`) {
		return false
	}
	start := s.i
	if _, ok = s.bytes(); !ok {
		return false
	}
	if ev.At, ok = parseUTC(s.b[start:s.i]); !ok || !s.lit(`,"agent":`) {
		return false
	}
	if a, ok := s.bytes(); !ok || string(a) != agent || !s.lit(`,"aggregate":`) {
		return false
	}
	ev.Agent = agent
	if agg, ok := s.bytes(); !ok || len(agg) > 0 && string(agg) != string(e.agg) || !s.lit(`,"key":`) {
		return false
	}
	ev.Aggregate = e.agg
	if ev.Key, ok = s.string(); !ok {
		return false
	}
	if s.lit(`,"causation_id":`) {
		if ev.CausationID, ok = s.string(); !ok {
			return false
		}
	}
	if s.lit(`,"correlation_id":`) {
		if ev.CorrelationID, ok = s.string(); !ok {
			return false
		}
	}
	if !s.lit(`,"payload":`) {
		return false
	}
	start = s.i
	if int(v) == e.version && e.plan != nil {
		// One pass: the plan decodes the payload and finds its end.
		val := reflect.New(e.goType)
		d := planDecoder{b: s.b, i: s.i, shared: owned}
		if d.object(val.UnsafePointer(), e.plan) {
			s.i = d.i
			ev.SchemaVersion, ev.Payload, ev.Data = e.version, s.b[start:s.i:s.i], e.box(val)
			return s.lit(`}`)
		}
	}
	if !s.object() {
		return false
	}
	raw := json.RawMessage(s.b[start:s.i:s.i])
	if int(v) != e.version {
		// An upcaster is given the payload only when it is JSON, as
		// go-json's path gives it.
		if !json.Valid(raw) {
			return false
		}
		// The upcaster gets its own copy, as go-json's RawMessage was:
		// one that edits its input in place must not change the caller's
		// message (or the memory store's stored body).
		var err error
		if raw, err = e.upcast(bytes.Clone(raw), int(v)); err != nil {
			return false
		}
		owned = false // the upcaster's bytes, which the caller may keep
	}
	decode := e.decodeFrom
	if int(v) == e.version {
		decode = e.decodeGoJSONPayload // the plan refused these bytes above
	}
	p, err := decode(raw, owned)
	if err != nil {
		return false
	}
	ev.SchemaVersion, ev.Payload, ev.Data = e.version, raw, p
	return s.lit(`}`)
}

// bytes reads a JSON string of printable ASCII without escapes, the only
// kind whose bytes are its value, and returns them without the quotes.
func (s *commitScanner) bytes() ([]byte, bool) {
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	j := plainRun(b, start)
	if j >= len(b) || b[j] != '"' {
		return nil, false
	}
	s.i = j + 1
	return b[start:j], true
}

// string is bytes as a string sharing b.
func (s *commitScanner) string() (string, bool) {
	v, ok := s.bytes()
	if !ok || len(v) == 0 {
		return "", ok
	}
	return unsafe.String(unsafe.SliceData(v), len(v)), true
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

// maxPayloadDepth is the deepest nesting of objects and arrays the fast
// path takes in a payload: the codec writes a few levels; anything deeper
// goes to go-json, which counts the commit's own three levels against its
// limit of 10000 and so refuses what a payload alone would pass.
const maxPayloadDepth = 512

// object skips a JSON object by matching its brackets outside strings;
// it does not validate what lies between them (decoding the payload into
// its type does). A string is skipped to its closing quote (one not
// escaped by an odd run of backslashes) with bytes.IndexByte. Nesting
// deeper than maxPayloadDepth is refused.
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
			if depth++; depth > maxPayloadDepth {
				return false
			}
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
