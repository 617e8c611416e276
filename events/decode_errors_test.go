package events

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	fastjson "github.com/goccy/go-json"
)

// decodeErrorEnvelope is a commit of one event of type typ at version v
// with payload, stored under agent main.
func decodeErrorEnvelope(typ string, v int, payload string) string {
	return `{"events":[{"id":"i","type":"` + typ + `","schema_version":` + fmt.Sprint(v) +
		`,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":` + payload + `}]}`
}

// A stored message that is not a commit is named in the terms of its JSON:
// the path of the offending value, what a commit holds there and what the
// message holds, its value cut to 64 bytes — never a Go type. The same
// error comes from DecodeCommit (fast path first), go-json alone and the
// read-ahead's owned decode, and errors.Is/As reach ErrDecode, the
// *DecodeError, the *WireError and the decoder's own error.
func TestDecodeCommit_ErrorsNameTheJSON(t *testing.T) {
	const head = "events: cannot decode stream sequence 7 (subject fledger.main.turn.t"
	const rs = head + ", event 0 type RetryScheduled version 2): events[0].payload."
	const int64Range = "an integer from -9223372036854775808 to 9223372036854775807"
	const uint64Range = "an unsigned integer from 0 to 18446744073709551615"
	types := fmt.Sprintf("one of the %d event types this fledger reads (e.g. AttemptFailed)", len(NewCatalogRegistry().Types()))
	const commit = `a JSON object (the commit envelope {"basis": …, "events": […]})`
	big := strings.Repeat("a", 10<<20)
	cut := strings.Repeat("a", 63) // 64 bytes with the opening quote
	for _, tc := range []struct {
		name, in, want string
		typeErr        bool // go-json's *UnmarshalTypeError is reachable
	}{
		{"empty array", `[]`, head + `): body: want ` + commit + `, found an array []`, true},
		{"empty object", `{}`, head + `): events: want a JSON array of one or more event envelopes, found no events field`, false},
		{"null", `null`, head + `): body: want ` + commit + `, found null`, false},
		{"string", `"x"`, head + `): body: want ` + commit + `, found a string "x"`, true},
		{"empty message", ``, head + `): body: want ` + commit + `, found nothing (an empty message)`, false},
		{"truncated", `{"events":[{"id":"i"`, head + `): body: want valid JSON, found unexpected end of JSON input at byte 20 of 20: {"events":[{"id":"i"`, false},
		{"not JSON", "hello", head + `): body: want valid JSON, found invalid character 'h' looking for beginning of value at byte 1 of 5: hello`, false},
		{"control bytes", "\x00\x01", head + `): body: want valid JSON, found invalid character '\x00' looking for beginning of value at byte 1 of 2: \x00\x01`, false},
		{"events an object", `{"events":{}}`, head + `): events: want a JSON array of one or more event envelopes, found an object {}`, true},
		{"events empty", `{"events":[]}`, head + `): events: want a JSON array of one or more event envelopes, found an array []`, false},
		{"envelope a number", `{"events":[1]}`, head + `): events[0]: want a JSON object (an event envelope), found a number 1`, true},
		{"id a number", `{"events":[{"id":5}]}`, head + `): events[0].id: want a string, found a number 5`, true},
		{"schema_version a string", `{"events":[{"id":"i","schema_version":"2"}]}`, head + `): events[0].schema_version: want ` + int64Range + `, found a string "2"`, true},
		{"at not a time", `{"events":[{"id":"i"},{"at":"yesterday"}]}`, head + `): events[1].at: want an RFC 3339 time string (e.g. "2026-01-15T10:00:00Z"), found a string "yesterday"`, false},
		{"basis negative", `{"basis":-1,"events":[]}`, head + `): basis: want ` + uint64Range + `, found a number -1`, true},
		{"payload an array", decodeErrorEnvelope("RetryScheduled", 2, `[]`), head + `, event 0 type RetryScheduled version 2): events[0].payload: want a JSON object (the RetryScheduled payload), found an array []`, true},
		{"number for string", decodeErrorEnvelope("RetryScheduled", 2, `{"turn_id":5}`), rs + `turn_id: want a string, found a number 5`, true},
		{"string for number", decodeErrorEnvelope("RetryScheduled", 2, `{"delay_ms":"x"}`), rs + `delay_ms: want ` + int64Range + `, found a string "x"`, true},
		{"float for int", decodeErrorEnvelope("RetryScheduled", 2, `{"attempt":1.5}`), rs + `attempt: want ` + int64Range + `, found a number 1.5`, true},
		{"overflow", decodeErrorEnvelope("RetryScheduled", 2, `{"attempt":99999999999999999999}`), rs + `attempt: want ` + int64Range + `, found a number 99999999999999999999`, true},
		{"unquoted for quoted unsigned", decodeErrorEnvelope("RetryScheduled", 2, `{"jitter_seed":-1}`), rs + `jitter_seed: want ` + uint64Range + ` written as a JSON string (e.g. "42"), found a number -1`, true},
		{"negative for unsigned", decodeErrorEnvelope("RetryScheduled", 2, `{"jitter_seed":"-1"}`), rs + `jitter_seed: want ` + uint64Range + ` written as a JSON string (e.g. "42"), found a string "-1"`, true},
		{"payload null", decodeErrorEnvelope("RetryScheduled", 2, `null`), head + `, event 0 type RetryScheduled version 2): events[0].payload: want a JSON object (the RetryScheduled payload), found null`, false},
		{"payload missing", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `,"payload":{}`, ``, 1), head + `, event 0 type RetryScheduled version 2): events[0].payload: want a JSON object (the RetryScheduled payload), found no payload field`, false},
		{"upcast: no schema_version", decodeErrorEnvelope("RetryScheduled", 0, `{}`), head + `, event 0 type RetryScheduled): events: cannot upcast event: schema_version: want 1 or more (the RetryScheduled version the event was written at), found 0 or no schema_version field`, false},
		{"upcast: a newer version", decodeErrorEnvelope("RetryScheduled", 99, `{}`), head + `, event 0 type RetryScheduled version 99): events: cannot upcast event: schema_version: want 2 or less (the newest RetryScheduled version this fledger reads), found 99 (written by a newer fledger)`, false},
		{"unknown type", decodeErrorEnvelope("Nope", 1, `{}`), head + `, event 0 type Nope version 1): events[0].type: want ` + types + `, found "Nope"`, false},
		{"empty type", decodeErrorEnvelope("", 1, `{}`), head + `): events[0].type: want ` + types + `, found "" or no type field`, false},
		{"another aggregate", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `"aggregate":"turn"`, `"aggregate":"profile"`, 1),
			head + `, event 0 type RetryScheduled version 2): events[0].aggregate: want "turn" (the aggregate of RetryScheduled) or no aggregate field, found "profile"`, false},
		{"another agent", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `"agent":"main"`, `"agent":"coder"`, 1),
			head + `, event 0 type RetryScheduled version 2): events[0].agent: want "main" (the agent of the subject it is stored under), found "coder"`, false},
		{"no agent", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `"agent":"main",`, ``, 1),
			head + `, event 0 type RetryScheduled version 2): events[0].agent: want "main" (the agent of the subject it is stored under), found "" or no agent field`, false},
		{"upcast: negative for unsigned", decodeErrorEnvelope("RetryScheduled", 1, `{"jitter_seed":-1}`), head + `, event 0 type RetryScheduled version 1): events: cannot upcast event: RetryScheduled version 1 to 2: field jitter_seed: -1 is negative; want an unsigned integer from 0 to 18446744073709551615`, false},
		{"10 MB string for number", decodeErrorEnvelope("RetryScheduled", 2, `{"attempt":"`+big+`"}`), rs + `attempt: want ` + int64Range + `, found a string "` + cut + `…`, true},
		{"10 MB array", `[` + strings.Repeat(`1,`, 5<<20) + `1]`, head + `): body: want ` + commit + `, found an array [` + strings.Repeat("1,", 31) + `1…`, true},
		{"10 MB truncated", `{"events":[{"id":"` + big, head + `): body: want valid JSON, found unexpected end of JSON input at byte 10485778 of 10485778: {"events":[{"id":"` + strings.Repeat("a", 46) + `…`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewCatalogRegistry()
			data := []byte(tc.in)
			_, err := r.DecodeCommit(data, 7, "fledger.main.turn.t")
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n %.300v\nwant\n %.300s", err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("message of %d bytes", len(err.Error()))
			}
			_, gerr := r.decodeGoJSON(data, 7, "fledger.main.turn.t")
			_, _, oerr := r.decodeOwned(nil, data, 7, "fledger.main.turn.t")
			if !reflect.DeepEqual(err, gerr) || !reflect.DeepEqual(err, oerr) {
				t.Fatalf("DecodeCommit %v\ngo-json %v\nowned %v", err, gerr, oerr)
			}
			var de *DecodeError
			if !errors.Is(err, ErrDecode) || !errors.As(err, &de) || de.Seq != 7 || de.Size != len(data) {
				t.Fatalf("%#v: not a *DecodeError of seq 7, %d bytes", err, len(data))
			}
			if errors.Is(err, ErrUnknownType) != strings.HasSuffix(tc.name, " type") {
				t.Fatalf("errors.Is(err, ErrUnknownType) = %v", errors.Is(err, ErrUnknownType))
			}
			if another := strings.HasPrefix(tc.name, "another") || tc.name == "no agent"; another && !errors.Is(err, ErrInvalidEnvelope) {
				t.Fatalf("errors.Is(err, ErrInvalidEnvelope) = false")
			}
			var we *WireError
			if errors.As(err, &we) == strings.HasPrefix(tc.name, "upcast") {
				t.Fatalf("*WireError reachable: %v", errors.As(err, &we))
			}
			var te *fastjson.UnmarshalTypeError
			if errors.As(err, &te) != tc.typeErr {
				t.Fatalf("go-json's *UnmarshalTypeError reachable: %v", !tc.typeErr)
			}
		})
	}
}

// An envelope's own strings can be as long as the message: an unknown
// type, an aggregate or an agent of a megabyte is shown cut to 64 bytes,
// in the error and in the DecodeError's Type (the quarantined table's).
func TestDecodeCommit_LongEnvelopeValuesAreCut(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	cut := strings.Repeat("x", 64) + "…"
	for _, tc := range []struct{ name, in, want string }{
		{"type", decodeErrorEnvelope(big, 1, `{}`), `, found "` + cut + `"`},
		{"aggregate", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `"aggregate":"turn"`, `"aggregate":"`+big+`"`, 1),
			`events[0].aggregate: want "turn" (the aggregate of RetryScheduled) or no aggregate field, found "` + cut + `"`},
		{"agent", strings.Replace(decodeErrorEnvelope("RetryScheduled", 2, `{}`), `"agent":"main"`, `"agent":"`+big+`"`, 1),
			`events[0].agent: want "main" (the agent of the subject it is stored under), found "` + cut + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCatalogRegistry().DecodeCommit([]byte(tc.in), 7, "fledger.main.turn.t")
			if err == nil || !strings.HasSuffix(err.Error(), tc.want) || len(err.Error()) > 400 {
				t.Fatalf("error (%d bytes) %.400v, want it to end %q", len(fmt.Sprint(err)), err, tc.want)
			}
			var de *DecodeError
			if errors.As(err, &de); de == nil || len(de.Type) > 70 || len(de.Reason()) > 400 {
				t.Fatalf("DecodeError type of %d bytes, reason of %d", len(de.Type), len(de.Reason()))
			}
		})
	}
}
