package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// PayloadValidator checks an encoded payload against the schema of its
// type and version before it is published. Errors should name the field
// (e.g. a JSON pointer) and wrap [ErrInvalidPayload]. The schemas package
// provides one built from schemas/events (see [WithValidator]).
type PayloadValidator interface {
	ValidatePayload(typ string, version int, payload []byte) error
}

// EncodeCommit checks evs and returns the JSON body of their [Commit]:
// {"events":[envelope, …]}. For each event it fills Type, Aggregate and
// SchemaVersion from the registry when empty, marshals Data into Payload
// (or, when Data is nil, strictly decodes Payload against the registered
// type: no unknown fields, every required field present), and normalises
// At to UTC milliseconds. It returns an *[EventError] wrapping
// [ErrUnknownType], [ErrInvalidPayload], [ErrInvalidEnvelope] or
// [ErrEmptyCommit]. It applies no size limit and no schema validation (the
// [Store] does both).
func (r *Registry) EncodeCommit(evs []Event) ([]byte, error) {
	envs, err := r.encodeEnvelopes(evs)
	if err != nil {
		return nil, err
	}
	return marshalCommit(envs, 0)
}

// encodeEnvelopes checks and completes every event's envelope (see
// EncodeCommit).
func (r *Registry) encodeEnvelopes(evs []Event) ([]Envelope, error) {
	if len(evs) == 0 {
		return nil, ErrEmptyCommit
	}
	envs := make([]Envelope, len(evs))
	for i := range evs {
		env, err := r.encodeEvent(i, &evs[i])
		if err != nil {
			return nil, err
		}
		envs[i] = env
	}
	return envs, nil
}

// marshalCommit writes {"events":[…]}, or {"basis":N,"events":[…]} when
// basis is not 0.
func marshalCommit(envs []Envelope, basis uint64) ([]byte, error) {
	n := 40
	for i := range envs {
		n += 256 + len(envs[i].Payload)
	}
	var b bytes.Buffer
	b.Grow(n)
	if basis != 0 {
		b.WriteString(`{"basis":`)
		b.WriteString(strconv.FormatUint(basis, 10))
		b.WriteString(`,"events":[`)
	} else {
		b.WriteString(`{"events":[`)
	}
	for i := range envs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeEnvelope(&b, &envs[i]); err != nil {
			return nil, &EventError{Index: i, Type: envs[i].Type, Reason: err.Error(), Err: ErrInvalidPayload}
		}
	}
	b.WriteString(`]}`)
	return b.Bytes(), nil
}

// tooLarge builds the ErrTooLarge error for a commit of n bytes over max,
// naming the largest event and its largest top-level payload field.
func tooLarge(envs []Envelope, n, max int) error {
	big := 0
	for i := range envs {
		if len(envs[i].Payload) > len(envs[big].Payload) {
			big = i
		}
	}
	env := &envs[big]
	field, fieldLen := "", 0
	var fields map[string]json.RawMessage
	if json.Unmarshal(env.Payload, &fields) == nil {
		for k, v := range fields {
			if len(v) > fieldLen || len(v) == fieldLen && k < field {
				field, fieldLen = k, len(v)
			}
		}
	}
	return &EventError{Index: big, Type: env.Type, Field: field, Err: ErrTooLarge,
		Reason: fmt.Sprintf("commit is %d bytes, the limit is %d; its largest event has a %d-byte payload whose largest field %s is %d bytes",
			n, max, len(env.Payload), field, fieldLen)}
}

// writeEnvelope appends env as JSON with the field order of [Envelope].
// Payload is written as is: it was produced by json.Marshal or compacted
// by encodeEvent, so it is valid, compact JSON.
func writeEnvelope(b *bytes.Buffer, env *Envelope) error {
	b.WriteString(`{"id":`)
	writeString(b, env.ID)
	b.WriteString(`,"type":`)
	writeString(b, env.Type)
	b.WriteString(`,"schema_version":`)
	b.WriteString(strconv.Itoa(env.SchemaVersion))
	b.WriteString(`,"at":`)
	at, err := env.At.MarshalJSON()
	if err != nil {
		return err
	}
	b.Write(at)
	b.WriteString(`,"agent":`)
	writeString(b, env.Agent)
	b.WriteString(`,"aggregate":`)
	writeString(b, string(env.Aggregate))
	b.WriteString(`,"key":`)
	writeString(b, env.Key)
	if env.CausationID != "" {
		b.WriteString(`,"causation_id":`)
		writeString(b, env.CausationID)
	}
	if env.CorrelationID != "" {
		b.WriteString(`,"correlation_id":`)
		writeString(b, env.CorrelationID)
	}
	b.WriteString(`,"payload":`)
	b.Write(env.Payload)
	b.WriteByte('}')
	return nil
}

// writeString writes s as a JSON string. Plain strings (the common case:
// ids, names, keys) are copied between quotes; anything else goes through
// encoding/json, which escapes and replaces invalid UTF-8.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			b.Write(q)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

func (r *Registry) encodeEvent(i int, ev *Event) (Envelope, error) {
	env := ev.Envelope
	fail := func(sentinel error, field, format string, args ...any) (Envelope, error) {
		return Envelope{}, &EventError{Index: i, Type: env.Type, Field: field, Reason: fmt.Sprintf(format, args...), Err: sentinel}
	}
	if ev.Data != nil {
		dt := ev.Data.EventType()
		if env.Type == "" {
			env.Type = dt
		} else if env.Type != dt {
			return fail(ErrInvalidPayload, "type", "envelope type %s carries a %s payload (%T)", env.Type, dt, ev.Data)
		}
	}
	if env.Type == "" {
		return fail(ErrInvalidEnvelope, "type", "empty event type and no payload")
	}
	e := r.lookup(env.Type)
	if e == nil {
		return fail(ErrUnknownType, "type", "type %q is not registered", env.Type)
	}
	switch {
	case env.SchemaVersion == 0:
		env.SchemaVersion = e.version
	case env.SchemaVersion != e.version:
		return fail(ErrInvalidPayload, "schema_version", "version %d given, only the current version %d can be written", env.SchemaVersion, e.version)
	}
	switch {
	case env.Aggregate == "":
		env.Aggregate = e.agg
	case env.Aggregate != e.agg:
		return fail(ErrInvalidEnvelope, "aggregate", "aggregate %q, type %s belongs to %q", env.Aggregate, env.Type, e.agg)
	}
	if env.ID == "" {
		return fail(ErrInvalidEnvelope, "id", "empty id (build events with events.New)")
	}
	if _, err := uuid.Parse(env.ID); err != nil {
		return fail(ErrInvalidEnvelope, "id", "id %q is not a UUID", env.ID)
	}
	if env.Agent == "" || len(env.Agent) > MaxAgentLen {
		return fail(ErrInvalidEnvelope, "agent", "agent must be 1..%d bytes, got %d", MaxAgentLen, len(env.Agent))
	}
	if env.Key == "" || len(env.Key) > MaxKeyLen {
		return fail(ErrInvalidEnvelope, "key", "key must be 1..%d bytes, got %d", MaxKeyLen, len(env.Key))
	}
	if env.At.IsZero() {
		return fail(ErrInvalidEnvelope, "at", "zero time")
	}
	env.At = env.At.UTC().Truncate(time.Millisecond)

	if ev.Data != nil {
		if t := reflect.TypeOf(ev.Data); t != e.goType {
			return fail(ErrInvalidPayload, "", "payload is Go type %s, %s v%d is %s", t, env.Type, e.version, e.goType)
		}
		raw, err := json.Marshal(ev.Data)
		if err != nil {
			return fail(ErrInvalidPayload, "", "%v", err)
		}
		env.Payload = raw
		return env, nil
	}
	if len(env.Payload) == 0 {
		return fail(ErrInvalidPayload, "", "no payload")
	}
	if field, err := e.strictCheck(env.Payload); err != nil {
		return fail(ErrInvalidPayload, field, "%v", err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, env.Payload); err != nil {
		return fail(ErrInvalidPayload, "", "%v", err)
	}
	env.Payload = c.Bytes()
	return env, nil
}

// strictCheck decodes raw into the registered type refusing unknown fields,
// and checks that every required field is present. It returns the
// offending field's name with the error.
func (e *typeEntry) strictCheck(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	v := reflect.New(e.goType)
	if err := dec.Decode(v.Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return te.Field, fmt.Errorf("field %s: %s is not a %s", te.Field, te.Value, te.Type)
		}
		msg := err.Error()
		const unk = `json: unknown field "`
		if len(msg) > len(unk) && msg[:len(unk)] == unk {
			return msg[len(unk) : len(msg)-1], fmt.Errorf("unknown field %s", msg[len(unk):len(msg)-1])
		}
		return "", err
	}
	// The reader's rule (required.go), at any depth, with the key
	// written exactly as the field's name: a writer stores what it means.
	if err := e.req.check(raw, "", true); err != nil {
		var me *missingFieldError
		if errors.As(err, &me) {
			return me.path, fmt.Errorf("required field %s is missing", me.path)
		}
		return "", err
	}
	return "", nil
}
