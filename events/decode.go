package events

import (
	"encoding/json"
	"fmt"
	"time"

	fastjson "github.com/goccy/go-json"
)

// The read path. Decoding stored commits is most of the cost of reading
// the stream (projection rebuilds, replay, engine catch-up), so it uses
// github.com/goccy/go-json, a faster drop-in for encoding/json's Unmarshal
// with the same rules (case-insensitive field names, last duplicate key
// wins, invalid UTF-8 replaced, trailing data refused). Only decoding
// switched: everything written (commits, ids for de-duplication, golden
// files) is still produced by encoding/json and the hand-written envelope
// writer in codec.go. The differential tests in decode_test.go check that
// both decoders give the same events and refuse the same inputs.
//
// A commit in the exact form the codec writes takes a faster path first
// (decode_fast.go): one pass, envelopes scanned by hand, each payload
// decoded straight from its bytes by its type's plan (payload_plan.go).
// Anything that path does not recognise, and any failure on it, is
// decoded again here with go-json alone (decodeGoJSON): the commit is
// scanned once for the envelopes (payloads kept as raw bytes, since the
// payload's type is only known from its envelope and may need
// upcasting), then once per payload into its registered Go type. So the
// events and the errors are go-json's for every input
// (decode_fast_test.go, payload_plan_test.go).

// wireCommit is a stored commit as read back.
type wireCommit struct {
	Basis  uint64         `json:"basis"`
	Events []wireEnvelope `json:"events"`
}

// wireEnvelope is [Envelope] with a cheaper "at" decoder.
type wireEnvelope struct {
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	SchemaVersion int             `json:"schema_version"`
	At            wireTime        `json:"at"`
	Agent         string          `json:"agent"`
	Aggregate     Aggregate       `json:"aggregate"`
	Key           string          `json:"key"`
	CausationID   string          `json:"causation_id,omitempty"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	Payload       json.RawMessage `json:"payload"`
}

// wireTime decodes the RFC 3339 UTC times the codec writes
// ("2006-01-02T15:04:05.999Z", 0 to 9 fraction digits) without
// time.Parse, and anything else exactly as time.Time does.
type wireTime time.Time

// UnmarshalJSON implements json.Unmarshaler.
func (t *wireTime) UnmarshalJSON(b []byte) error {
	if v, ok := parseUTC(b); ok {
		*t = wireTime(v)
		return nil
	}
	return (*time.Time)(t).UnmarshalJSON(b)
}

// parseUTC parses a quoted "YYYY-MM-DDTHH:MM:SS[.fffffffff]Z" and reports
// whether b had that form with every field in range. It gives the same
// value as time.Parse(time.RFC3339, …) for such inputs; callers fall back
// to time.Time's own decoder when ok is false (other offsets, errors).
func parseUTC(b []byte) (time.Time, bool) {
	const base = len(`"2006-01-02T15:04:05Z"`)
	n := len(b)
	if n < base || n > base+10 || b[0] != '"' || b[n-1] != '"' || b[n-2] != 'Z' ||
		b[5] != '-' || b[8] != '-' || b[11] != 'T' || b[14] != ':' || b[17] != ':' {
		return time.Time{}, false
	}
	num := func(i, w int) int {
		v := 0
		for _, c := range b[i : i+w] {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(1, 4), num(6, 2), num(9, 2)
	hour, min, sec := num(12, 2), num(15, 2), num(18, 2)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		min < 0 || min > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	if day > 28 && day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	nsec := 0
	if frac := b[20 : n-2]; len(frac) > 0 {
		// ".f" to ".fffffffff"; a bare "." or a comma is left to time.Parse.
		if len(frac) < 2 || frac[0] != '.' {
			return time.Time{}, false
		}
		if nsec = num(21, len(frac)-1); nsec < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC), true
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// DecodeCommit decodes one stored message body into its events, upcasting
// each payload to its type's current version and decoding it into the
// registered Go type. An event whose envelope names another aggregate
// than its type's is refused (ErrInvalidEnvelope), as Encode refuses to
// write one; one that names none gets its type's. seq and subject are the message's stream sequence and
// subject; they are copied into each event (Seq) and into errors. Any
// failure returns a *[DecodeError] and no events: a commit is decoded whole
// or not at all.
func (r *Registry) DecodeCommit(data []byte, seq uint64, subject string) ([]Event, error) {
	// The codec's own output takes the fast path of decode_fast.go;
	// anything it does not recognise, and any failure on the way, is
	// decoded again by go-json, so the result and the errors are go-json's.
	if out, ok := r.decodeFastCopy(data, seq, subject); ok {
		return out, nil
	}
	return r.decodeGoJSON(data, seq, subject)
}

// decodeOwned is DecodeCommit for data that nothing else holds or
// changes afterwards (a message the NATS client delivered, once its
// reader dropped it): the events' strings and payloads share its memory
// instead of a copy (see decodeFast). The events are appended to dst
// (the read-ahead worker's slice for a chunk of messages: one allocation
// for many commits); evs is them, capped at their end, and all is dst
// with them. On go-json's path evs is a slice of its own.
func (r *Registry) decodeOwned(dst []Event, data []byte, seq uint64, subject string) (all, evs []Event, err error) {
	n0 := len(dst)
	if all, ok := r.decodeFast(dst, data, seq, subject, true); ok {
		return all, all[n0:len(all):len(all)], nil
	}
	evs, err = r.decodeGoJSON(data, seq, subject)
	return dst, evs, err
}

// decodeGoJSON is DecodeCommit with go-json alone: the decoder of
// anything decodeFast does not take.
func (r *Registry) decodeGoJSON(data []byte, seq uint64, subject string) ([]Event, error) {
	var c wireCommit
	if err := fastjson.Unmarshal(data, &c); err != nil {
		return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Index: -1, Err: commitError(data, err)}
	}
	return r.decodeEnvelopes(&c, data, seq, subject)
}

// decodeEnvelopes checks c's envelopes and decodes their payloads (see
// DecodeCommit).
func (r *Registry) decodeEnvelopes(c *wireCommit, data []byte, seq uint64, subject string) ([]Event, error) {
	if len(c.Events) == 0 {
		return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Index: -1, Err: commitError(data, nil)}
	}
	subjAgent, err := subjectAgent(subject)
	if err != nil {
		return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Index: -1, Err: err}
	}
	out := make([]Event, len(c.Events))
	for i := range c.Events {
		w := &c.Events[i]
		e := r.lookup(w.Type)
		if e == nil {
			// An unknown type is the message's text: shown cut, as any value.
			t := cutText(w.Type)
			return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: t, Version: w.SchemaVersion, Index: i,
				Err: &WireError{Path: fmt.Sprintf("events[%d].type", i), Want: r.wantType(), Found: foundText(w.Type, "type"), Err: ErrUnknownType}}
		}
		switch w.Aggregate {
		case e.agg:
		case "":
			w.Aggregate = e.agg // the type's: every reader routes it alike
		default:
			// Every writer sets the aggregate from the type (Encode refuses
			// another): a message that says otherwise is not a fledger
			// commit, and readers routing by envelope and by type would
			// fold it into different aggregates.
			return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: w.Type, Version: w.SchemaVersion, Index: i,
				Err: &WireError{Path: fmt.Sprintf("events[%d].aggregate", i), Want: fmt.Sprintf("%q (the aggregate of %s) or no aggregate field", e.agg, w.Type),
					Found: foundText(string(w.Aggregate), "aggregate"), Err: ErrInvalidEnvelope}}
		}
		if w.Agent != subjAgent {
			// Every writer stores a commit under its agent's subjects
			// (commitBody refuses another): readers selecting by subject
			// and folding by envelope would disagree about it.
			return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: w.Type, Version: w.SchemaVersion, Index: i,
				Err: &WireError{Path: fmt.Sprintf("events[%d].agent", i), Want: fmt.Sprintf("%q (the agent of the subject it is stored under)", subjAgent),
					Found: foundText(w.Agent, "agent"), Err: ErrInvalidEnvelope}}
		}
		raw, version := w.Payload, w.SchemaVersion
		if version != e.version {
			var err error
			if raw, err = e.upcast(raw, version); err != nil {
				return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: w.Type, Version: w.SchemaVersion, Index: i, Err: err}
			}
			version = e.version
		}
		if t := trimSpace(raw); len(t) == 0 || string(t) == "null" {
			// go-json leaves a null payload's struct zero: it would fold as
			// a real event (a turn with no start). Every writer stores an
			// object, {} at least.
			f := "null"
			if len(t) == 0 {
				f = "no payload field"
			}
			return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: w.Type, Version: w.SchemaVersion, Index: i,
				Err: &WireError{Path: fmt.Sprintf("events[%d].payload", i), Want: "a JSON object (the " + w.Type + " payload)", Found: f, Err: ErrInvalidEnvelope}}
		}
		p, err := e.decode(raw)
		if err != nil {
			return nil, &DecodeError{Seq: seq, Subject: subject, Size: len(data), Type: w.Type, Version: w.SchemaVersion, Index: i,
				Err: payloadError(i, w.Type, e.goType, raw, err)}
		}
		out[i] = Event{
			Envelope: Envelope{
				ID: w.ID, Type: w.Type, SchemaVersion: version, At: time.Time(w.At),
				Agent: w.Agent, Aggregate: w.Aggregate, Key: w.Key,
				CausationID: w.CausationID, CorrelationID: w.CorrelationID, Payload: raw,
			},
			Data: p, Seq: seq, Index: i, Basis: c.Basis,
		}
	}
	return out, nil
}
