package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// decodeCommitStd is the reference decoder: DecodeCommit as it was written
// with encoding/json only. The read path (decode.go) must give the same
// events and fail on the same inputs.
func (r *Registry) decodeCommitStd(data []byte, seq uint64, subject string) ([]Event, error) {
	var c struct {
		Basis  uint64     `json:"basis"`
		Events []Envelope `json:"events"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, &DecodeError{Seq: seq, Subject: subject, Index: -1, Err: err}
	}
	if len(c.Events) == 0 {
		return nil, &DecodeError{Seq: seq, Subject: subject, Index: -1, Err: errors.New("commit holds no events")}
	}
	out := make([]Event, len(c.Events))
	for i := range c.Events {
		env := &c.Events[i]
		e := r.lookup(env.Type)
		if e == nil {
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i,
				Err: fmt.Errorf("%w: %q", ErrUnknownType, env.Type)}
		}
		switch env.Aggregate {
		case e.agg:
		case "":
			env.Aggregate = e.agg
		default:
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i,
				Err: fmt.Errorf("%w: aggregate %q, type %s belongs to %q", ErrInvalidEnvelope, env.Aggregate, env.Type, e.agg)}
		}
		if agent, _, _, err := ParseSubject(subject); err != nil || env.Agent != agent {
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i,
				Err: fmt.Errorf("%w: agent %q, stored under %s", ErrInvalidEnvelope, env.Agent, subject)}
		}
		raw := env.Payload
		if env.SchemaVersion != e.version {
			var err error
			if raw, err = e.upcast(raw, env.SchemaVersion); err != nil {
				return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i, Err: err}
			}
			env.Payload, env.SchemaVersion = raw, e.version
		}
		if p := bytes.TrimSpace(raw); len(p) == 0 || string(p) == "null" {
			// A payload is an object: null would leave the struct zero.
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i,
				Err: fmt.Errorf("%w: payload %q", ErrInvalidEnvelope, p)}
		}
		v := reflect.New(e.goType)
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i, Err: err}
		}
		// A field json.Marshal always writes must be there (required.go).
		if err := e.req.check(raw, "", false); err != nil {
			return nil, &DecodeError{Seq: seq, Subject: subject, Type: env.Type, Index: i, Err: err}
		}
		out[i] = Event{Envelope: *env, Data: v.Elem().Interface().(Payload), Seq: seq, Index: i, Basis: c.Basis}
	}
	return out, nil
}

// subjectFor is a subject of the agent of data's first event, so inputs
// are decoded (not refused as stored under another agent); "x" when data
// names none.
func subjectFor(data []byte) string {
	var c struct {
		Events []struct {
			Agent string `json:"agent"`
		} `json:"events"`
	}
	agent := "x"
	if json.Unmarshal(data, &c) == nil && len(c.Events) > 0 && c.Events[0].Agent != "" {
		agent = c.Events[0].Agent
	}
	return "fledger." + EncodeToken(agent) + ".turn.t"
}

// sameDecode fails t unless DecodeCommit and the reference agree on data:
// equal events, or errors of the same kind naming the same message,
// event index and type.
func sameDecode(t *testing.T, r *Registry, data []byte) {
	t.Helper()
	subject := subjectFor(data)
	got, gerr := r.DecodeCommit(data, 7, subject)
	want, werr := r.decodeCommitStd(data, 7, subject)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("input %q:\n fast error: %v\n std error:  %v", data, gerr, werr)
	}
	if werr != nil {
		var g, w *DecodeError
		if !errors.As(gerr, &g) || !errors.As(werr, &w) {
			t.Fatalf("input %q: errors %T %v / %T %v, want *DecodeError", data, gerr, gerr, werr, werr)
		}
		if g.Seq != w.Seq || g.Subject != w.Subject || g.Index != w.Index || g.Type != w.Type ||
			errors.Is(g, ErrUnknownType) != errors.Is(w, ErrUnknownType) || errors.Is(g, ErrUpcast) != errors.Is(w, ErrUpcast) {
			t.Fatalf("input %q:\n fast error: %+v\n std error:  %+v", data, g, w)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q:\n fast: %#v\n std:  %#v", data, got, want)
	}
}

// decodeCorpus is every catalog example as a commit, plus hand-written
// variants of the wire form that a writer other than fledger's codec, or a
// damaged message, could produce.
func decodeCorpus(t testing.TB, r *Registry) [][]byte {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	var out [][]byte
	var all []Event
	for i, p := range Examples() {
		at := t0.Add(time.Duration(i*137) * time.Millisecond)
		ev := New("main", fmt.Sprintf("key:%d", i), at, p, WithCorrelation("turn-01JH8Z"), WithCausation("c-1"))
		all = append(all, ev)
		body, err := r.EncodeCommit([]Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	body, err := r.EncodeCommit(all)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, body)

	env := func(fields string) []byte {
		return []byte(`{"events":[{"id":"0194a3c0-0000-7000-8000-000000000001","type":"ProfileCleared","schema_version":1,` +
			fields + `}]}`)
	}
	okPayload := `"payload":{"profile_id":"p","provider":"openai","by":"cli"}`
	for _, at := range []string{
		`"2026-01-15T10:00:00Z"`, `"2026-01-15T10:00:00.5Z"`, `"2026-01-15T10:00:00.123Z"`,
		`"2026-01-15T10:00:00.123456789Z"`, `"2026-01-15T10:00:00.1234567891Z"`, `"2026-01-15T10:00:00.Z"`,
		`"2026-01-15T10:00:00,5Z"`, `"2026-01-15T10:00:00+02:00"`, `"2026-01-15T10:00:00.25-07:30"`,
		`"2026-01-15t10:00:00z"`, `"2024-02-29T00:00:00Z"`, `"2025-02-29T00:00:00Z"`, `"2026-04-31T00:00:00Z"`,
		`"2026-13-01T00:00:00Z"`, `"2026-00-01T00:00:00Z"`, `"2026-01-00T00:00:00Z"`, `"2026-01-15T24:00:00Z"`,
		`"2026-01-15T23:60:00Z"`, `"2026-01-15T23:59:60Z"`, `"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59.999Z"`,
		`"2026-1-15T10:00:00Z"`, `"2026-01-15 10:00:00Z"`, `"+026-01-15T10:00:00Z"`, `"2026-01-15T10:00:00"`,
		`"2026-01-15T10:00:00\u005a"`, `"2026-01-15T1a:00:00Z"`, `null`, `0`, `""`, `"x"`, `true`, `{}`,
	} {
		out = append(out, env(`"at":`+at+`,"agent":"main","aggregate":"profile","key":"p",`+okPayload))
	}
	for _, f := range []string{
		`"agent":"ma\u00efn","aggregate":"profile","key":"p\n\"q\"\\",` + okPayload,
		"\"agent\":\"bad \xff\xfe utf8\",\"key\":\"k\"," + okPayload,
		`"agent":"a","AGENT":"b","Key":"k","key":"k2","Payload":{"profile_id":"P"},` + okPayload,
		`"agent":"a","key":"k",` + okPayload + `,"payload":{"profile_id":"second"}`,
		`"agent":"a","key":"k","extra":{"x":[1,2,{"y":null}]},"causation_id":"c","correlation_id":"r",` + okPayload,
		`"agent":null,"key":"k","causation_id":null,` + okPayload,
		`"agent":"a","key":"k","payload":null`,
		`"agent":"a","key":"k"`,
		`"agent":"a","key":"k","payload":{}`,
		`"agent":"a","key":"k","payload":{"profile_id":1}`,
		`"agent":"a","key":"k","payload":{"profile_id":"p","unknown":[true]}`,
		`"agent":"a","key":"k","payload":[]`,
		`"agent":"a","key":"k","payload":"s"`,
		`"agent":"a","key":"k","payload":{"profile_id":"p"`,
		`"agent":1,"key":"k",` + okPayload,
		`"agent":"a","key":"k","aggregate":7,` + okPayload,
		`"agent":"a","key":"k" ` + okPayload,
		` "agent" : "a" , "key" : "k" , ` + okPayload + ` `,
	} {
		out = append(out, env(f))
	}
	sv := func(v string) []byte {
		return []byte(`{"events":[{"type":"ProfileCleared","schema_version":` + v + `,` + okPayload + `}]}`)
	}
	for _, v := range []string{`0`, `1`, `2`, `-1`, `1.0`, `1e0`, `"1"`, `null`, `99999999999999999999`} {
		out = append(out, sv(v))
	}
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `{"events":null}`, `{"events":[]}`, `{"events":[null]}`, `{"events":{}}`,
		`{"events":[{"type":"Martian","schema_version":1,"payload":{}}]}`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{}},{"type":"Martian"}]}`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{}}]}x`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{}}]} `,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{}}],}`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{}}]`,
		`{"Events":[{"Type":"ProfileCleared","Schema_Version":1,"PAYLOAD":{"Profile_ID":"p"}}]}`,
		`{"events":[{"type":"ProfileFailureRecorded","schema_version":1,"payload":{"failure_counts":{"a":1,"a":2,"b":null}}}]}`,
		`{"events":[{"type":"ProfileFailureRecorded","schema_version":1,"payload":{"failure_counts":null,"error_count":1.5}}]}`,
		`{"events":[{"type":"ConfigApplied","schema_version":1,"payload":{"config":{"a" : [1, 2]},"warnings":["x",null]}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":1,"payload":{"seed":18446744073709551615,"chain":[{"provider":"p"}],"strict":true}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":1,"payload":{"seed":18446744073709551616}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":1,"payload":{"seed":-1}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":2,"payload":{"seed":9007199254740993,"Seed":1,"turn_id":"t"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":2,"payload":{"seed":null}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":2,"payload":{"seed":"5"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":2,"payload":{"seed":1e3}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":"18446744073709551615"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":"18446744073709551616"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":12}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":" 12"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":"012"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":"-1"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":"null"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":3,"payload":{"seed":""}}]}`,
		`{"events":[{"type":"RetryScheduled","schema_version":1,"payload":{"jitter_seed":11029143739690574337}}]}`,
		`{"events":[{"type":"RetryScheduled","schema_version":2,"payload":{"jitter_seed":"11029143739690574337"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":1,"payload":{"strict":"true"}}]}`,
		`{"events":[{"type":"TurnStarted","schema_version":1,"payload":{"chain":[{"provider":"p"},"x"]}}]}`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{"profile_id":"\ud83d\ude00 \ud800 \u0000"}}]}`,
		`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":{"profile_id":"\x"}}]}`,
	} {
		out = append(out, []byte(s))
	}
	return out
}

func TestDecodeCommit_SameAsEncodingJSON(t *testing.T) {
	r := NewCatalogRegistry()
	for _, data := range decodeCorpus(t, r) {
		sameDecode(t, r, data)
	}
}

// TestDecodeCommit_SameWithUpcasters checks the decoders agree on a type
// at version 3 reading versions 1, 2, 3 and 4 (too new).
func TestDecodeCommit_SameWithUpcasters(t *testing.T) {
	r := NewCatalogRegistry()
	if err := r.Register(ProfileCleared{}, 3); err != nil {
		t.Fatal(err)
	}
	for from := 1; from <= 2; from++ {
		if err := r.RegisterUpcaster("ProfileCleared", from, func(p json.RawMessage) (json.RawMessage, error) {
			var m map[string]any
			if err := json.Unmarshal(p, &m); err != nil {
				return nil, err
			}
			m["note"] = fmt.Sprint(m["note"], "+", from)
			return json.Marshal(m)
		}); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 4; v++ {
		sameDecode(t, r, []byte(fmt.Sprintf(`{"events":[{"type":"ProfileCleared","schema_version":%d,"payload":{"profile_id":"p","note":"n"}}]}`, v)))
	}
	sameDecode(t, r, []byte(`{"events":[{"type":"ProfileCleared","schema_version":1,"payload":[]}]}`))
}

func TestParseUTC_SameAsTimeParse(t *testing.T) {
	for _, s := range []string{
		"2026-01-15T10:00:00Z", "2026-01-15T10:00:00.1Z", "2026-01-15T10:00:00.120Z", "2026-01-15T10:00:00.000000001Z",
		"2024-02-29T23:59:59.999999999Z", "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0000-12-31T00:00:00Z",
	} {
		got, ok := parseUTC([]byte(`"` + s + `"`))
		want, err := time.Parse(time.RFC3339, s)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: parseUTC %v %v, time.Parse %v %v", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"2025-02-29T00:00:00Z", "2026-01-15T10:00:00.Z", "2026-01-15T10:00:00+00:00", "2026-01-15T10:00:60Z"} {
		if _, ok := parseUTC([]byte(`"` + s + `"`)); ok {
			t.Fatalf("%s: parsed by the fast path", s)
		}
	}
}

func FuzzDecodeCommit(f *testing.F) {
	r := NewCatalogRegistry()
	for _, data := range decodeCorpus(f, r) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameDecode(t, r, data)
	})
}

func BenchmarkDecodeCommit(b *testing.B) {
	r := NewCatalogRegistry()
	corpus := decodeCorpus(b, r)
	body := corpus[len(Examples())] // every catalog type in one commit
	subject := subjectFor(body)
	for _, c := range []struct {
		name string
		fn   func([]byte, uint64, string) ([]Event, error)
	}{{"std", r.decodeCommitStd}, {"fast", r.DecodeCommit}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := c.fn(body, 1, subject); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(Examples()))/b.Elapsed().Seconds(), "events/s")
		})
	}
}
