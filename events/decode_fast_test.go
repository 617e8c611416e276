package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkFastDecode compares decodeFast with go-json's path on one message:
// when the fast path takes data (owned or not) its events must be exactly
// go-json's, and DecodeCommit's result or error must be go-json's. A copy
// decoded not owned is overwritten afterwards: its events must not change
// (they share nothing with the caller's data). taken reports whether the
// fast path took data.
func checkFastDecode(r *Registry, data []byte, seq uint64, subject string) (taken bool, err error) {
	want, werr := r.decodeGoJSON(data, seq, subject)
	for _, owned := range []bool{false, true} {
		in := bytes.Clone(data)
		got, ok := r.decodeFast(nil, in, seq, subject, owned)
		if !ok {
			continue
		}
		taken = true
		if werr != nil {
			return taken, fmt.Errorf("owned %v: fast path decoded %d events, go-json refuses: %v", owned, len(got), werr)
		}
		if !owned {
			for i := range in {
				in[i] = 'x'
			}
		}
		if !reflect.DeepEqual(got, want) {
			return taken, fmt.Errorf("owned %v:\n fast:    %#v\n go-json: %#v", owned, got, want)
		}
	}
	got, gerr := r.DecodeCommit(data, seq, subject)
	if werr != nil {
		var g, w *DecodeError
		if !errors.As(gerr, &g) || !errors.As(werr, &w) || !reflect.DeepEqual(g, w) {
			return taken, fmt.Errorf("DecodeCommit error %#v, go-json's %#v", gerr, werr)
		}
		return taken, nil
	}
	if gerr != nil || !reflect.DeepEqual(got, want) {
		return taken, fmt.Errorf("DecodeCommit: %v %#v, go-json's %#v", gerr, got, want)
	}
	return taken, nil
}

// ledgerMessage is one stored message of a fixture ledger.
type ledgerMessage struct {
	Seq     uint64          `json:"seq"`
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
}

// fixtureLedgers returns every message of every fixtures/ledgers/*.jsonl.
func fixtureLedgers(tb testing.TB) []ledgerMessage {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "fixtures", "ledgers", "*.jsonl"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("fixture ledgers: %v %v", files, err)
	}
	var out []ledgerMessage
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
		for sc.Scan() {
			var m ledgerMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			out = append(out, m)
		}
		_ = fh.Close()
		if err := sc.Err(); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// currentCommits is every fixture ledger commit as this build writes it:
// decoded (upcast to the current versions) and encoded again with its
// basis, under its subject. The realistic input of BenchmarkDecodeCommit.
func currentCommits(tb testing.TB, r *Registry) []ledgerMessage {
	tb.Helper()
	var out []ledgerMessage
	for _, m := range fixtureLedgers(tb) {
		evs, err := r.decodeGoJSON(m.Data, m.Seq, m.Subject)
		if err != nil {
			tb.Fatalf("seq %d: %v", m.Seq, err)
		}
		envs := make([]Envelope, len(evs))
		for i := range evs {
			envs[i] = evs[i].Envelope
		}
		body, err := marshalCommit(envs, evs[0].Basis)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, ledgerMessage{Seq: m.Seq, Subject: m.Subject, Data: body})
	}
	return out
}

// Every commit of the fixture ledgers, as stored (old versions, upcast)
// and as written today, decodes alike on both paths; today's form takes
// the fast path.
func TestDecodeFast_FixtureLedgers(t *testing.T) {
	r := NewCatalogRegistry()
	stored := fixtureLedgers(t)
	for _, m := range stored {
		if _, err := checkFastDecode(r, m.Data, m.Seq, m.Subject); err != nil {
			t.Fatalf("ledger seq %d (%s): %v", m.Seq, m.Subject, err)
		}
	}
	current := currentCommits(t, r)
	for _, m := range current {
		taken, err := checkFastDecode(r, m.Data, m.Seq, m.Subject)
		if err != nil {
			t.Fatalf("re-encoded seq %d (%s): %v", m.Seq, m.Subject, err)
		}
		if !taken {
			t.Fatalf("re-encoded seq %d: not taken by the fast path: %.200s", m.Seq, m.Data)
		}
	}
	if len(stored) != 86+265 || len(current) != len(stored) {
		t.Fatalf("%d ledger messages, want 351", len(stored))
	}
}

// fastEdgeCases are commits near the fast path's form: each either takes
// it or is left to go-json, with the same result.
func fastEdgeCases() []string {
	const head = `{"events":[{"id":"0194a3c0-0000-7000-8000-000000000001","type":"ProfileCleared","schema_version":1,"at":"2026-01-15T10:00:00.123Z","agent":"main","aggregate":"profile","key":"openai:a"`
	payload := func(p string) string { return head + `,"payload":` + p + `}]}` }
	big := strings.Repeat("x", 1<<20)
	out := []string{
		payload(`{"profile_id":"openai:a","provider":"openai","by":"cli"}`),
		payload(`{"profile_id":"openai:a","provider":"openai","by":"cli","note":"` + big + `"}`),
		payload(`{"profile_id":"a\"b\\c\/d\u00e9\ud83d\ude00","provider":"openai","by":"cli"}`),
		payload(`{"profile_id":"\ud800","provider":"` + "\xff\xfe" + `","by":"caf` + "\xc3\xa9" + `"}`),
		payload(`{"profile_id":"a","profile_id":"b","PROVIDER":"p","Provider":"q","by":"x"}`),
		payload(`{"profile_id":"a","unknown":{"deep":[1,{"x":"]}"}]},"by":"x"}`),
		payload(`{"profile_id": "a" , "by" : "x" }`),
		payload(`{"profile_id":"a","by":null}`),
		payload(`{"profile_id":"a","by":1}`),
		payload(`{"profile_id":"a","by":"x"`),
		payload(`{"profile_id":"a",}`),
		payload(`{"profile_id":tru}`),
		payload(`{"a":[}]}`),
		payload(`{[]}`),
		payload(`{"profile_id":"a"}} `),
		payload(`{}`),
		head + `,"causation_id":"c","correlation_id":"c","payload":{"profile_id":"a"}}]}`,
		head + `,"correlation_id":"c","causation_id":"c","payload":{"profile_id":"a"}}]}`,
		head + `,"causation_id":"","payload":{"profile_id":"a"}}]}`,
		head + `,"payload":{"profile_id":"a"},"payload":{"profile_id":"b"}}]}`,
		head + `,"payload":{"profile_id":"a"}},` + head[len(`{"events":[`):] + `,"payload":{"profile_id":"b"}}]}`,
		head + `,"payload":{"profile_id":"a"}},{"id":"x","type":"Martian","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"profile","key":"k","payload":{}}]}`,
		`{"basis":18446744073709551615,` + head[1:] + `,"payload":{}}]}`,
		`{"basis":18446744073709551616,` + head[1:] + `,"payload":{}}]}`,
		`{"basis":0,` + head[1:] + `,"payload":{}}]}`,
		`{"basis":00,` + head[1:] + `,"payload":{}}]}`,
		strings.Replace(payload(`{}`), `"aggregate":"profile"`, `"aggregate":""`, 1),
		strings.Replace(payload(`{}`), `"aggregate":"profile"`, `"aggregate":"turn"`, 1),
		strings.Replace(payload(`{}`), `"agent":"main"`, `"agent":"other"`, 1),
		strings.Replace(payload(`{}`), `"agent":"main"`, `"agent":"ma\u0069n"`, 1),
		strings.Replace(payload(`{}`), `"key":"openai:a"`, `"key":""`, 1),
		strings.Replace(payload(`{}`), `"id":"0194a3c0-0000-7000-8000-000000000001"`, `"id":""`, 1),
		strings.Replace(payload(`{}`), `"schema_version":1`, `"schema_version":2`, 1),
		strings.Replace(payload(`{}`), `"schema_version":1`, `"schema_version":0`, 1),
		strings.Replace(payload(`{}`), `"schema_version":1`, `"schema_version":4294967297`, 1),
		strings.Replace(payload(`{}`), `"type":"ProfileCleared"`, `"type":"profilecleared"`, 1),
		strings.Replace(payload(`{}`), `"at":"2026-01-15T10:00:00.123Z"`, `"at":"2026-01-15T10:00:00.123+00:00"`, 1),
		`{"events":[{"id":"i","type":"TurnStarted","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":{"seed":18446744073709551615,"turn_id":"t"}}]}`,
		`{"events":[{"id":"i","type":"TurnStarted","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":{"seed":1,"turn_id":"t",}}]}`,
		`{"events":[{"id":"i","type":"TurnStarted","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":{"seed":[}]}}]}`,
		`{"events":[{"id":"i","type":"TurnStarted","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":{"seed":5,"x":tru}}]}`,
		`{"events":[{"id":"i","type":"RetryScheduled","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"turn","key":"t","payload":{"jitter_seed":11029143739690574337}}]}`,
		`{"events":[{"id":"i","type":"ProfileFailureRecorded","schema_version":2,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"profile","key":"p","payload":{"failure_counts":{"a":1,"a":2,"b":null}}}]}`,
		`{"events":[{"id":"i","type":"ConfigApplied","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"main","aggregate":"config","key":"h","payload":{"config":{"a" : [1, 2]},"warnings":["x",null]}}]}`,
		`{"events":[]}`, `{"events":[{}]}`, `{"events":[`, `not json`, "\x00\x01", `{"events":[{"id":"a"}]}`,
		`NATS/1.0 503` + "\r\n\r\n",
	}
	return out
}

func TestDecodeFast_EdgeCases(t *testing.T) {
	r := NewCatalogRegistry()
	inputs := fastEdgeCases()
	for _, data := range decodeCorpus(t, r) {
		inputs = append(inputs, string(data))
	}
	taken := 0
	for i, s := range inputs {
		ok, err := checkFastDecode(r, []byte(s), 42, "fledger.main.profile.openai:a")
		if err != nil {
			t.Fatalf("input %d %.300q: %v", i, s, err)
		}
		if ok {
			taken++
		}
	}
	// The first seven edge cases, the hand-made basis/aggregate forms and
	// the corpus's codec commits take the fast path.
	if taken < 10 {
		t.Fatalf("only %d inputs took the fast path", taken)
	}
}

// TestDecodeFast_TakesTheCodecsOutput checks that the codec's own commits
// take the fast path, and that forms the codec does not write do not.
func TestDecodeFast_TakesTheCodecsOutput(t *testing.T) {
	r := NewCatalogRegistry()
	corpus := decodeCorpus(t, r)
	for i, data := range corpus[:len(Examples())+1] {
		subject := subjectFor(data)
		if _, ok := r.decodeFast(nil, data, 1, subject, false); !ok {
			t.Fatalf("commit %d (%.80s…): not taken by the fast path", i, data)
		}
	}
	const env = `{"events":[{"id":"a","type":"ProfileCleared","schema_version":1,"at":"2026-01-15T10:00:00Z","agent":"a","aggregate":"profile","key":"k","payload":`
	for _, payload := range []string{
		`{"profile_id":"k"}`, `{"profile_id":"k","note":"}"}`, `{"note":"\\","profile_id":"k"}`, `{"profile_id":"k","note":"\"}","b":[{"c":"]"}]}`, `{"profile_id":"k","note":"\\\"}"}`,
	} {
		evs, ok := r.decodeFast(nil, []byte(env+payload+`}]}`), 1, "fledger.a.profile.k", false)
		if !ok || len(evs) != 1 || string(evs[0].Payload) != payload {
			t.Fatalf("payload %s: fast path %v %+v", payload, ok, evs)
		}
	}
	for _, s := range []string{
		`{"events":[]}`,
		env + `{"a":"\"}}]}`,
		` ` + env + `{}}]}`,
		env + `{}}]} `,
		strings.Replace(env, `"id":"a"`, `"id":"a\u0041"`, 1) + `{}}]}`,
		strings.Replace(env, `"schema_version":1`, `"schema_version":01`, 1) + `{}}]}`,
		strings.Replace(env, `T10:00:00Z`, `T10:00:00+01:00`, 1) + `{}}]}`,
		strings.Replace(env, `{"id":"a","type":"ProfileCleared"`, `{"type":"ProfileCleared","id":"a"`, 1) + `{}}]}`,
		env + `[]}]}`,
		env + `{"a":"}"}]}`,
		`{"basis":-1,` + env[1:] + `{}}]}`,
	} {
		if _, ok := r.decodeFast(nil, []byte(s), 1, "fledger.a.profile.k", true); ok {
			t.Fatalf("%s: taken by the fast path", s)
		}
	}
}

// FuzzDecodeFast compares the fast path with go-json's on any input (see
// checkFastDecode); the seeds are the ledgers' commits, today's form of
// them, the edge cases and the decode corpus.
func FuzzDecodeFast(f *testing.F) {
	r := NewCatalogRegistry()
	for _, m := range fixtureLedgers(f) {
		f.Add([]byte(m.Data))
	}
	for _, m := range currentCommits(f, r) {
		f.Add([]byte(m.Data))
	}
	for _, s := range fastEdgeCases() {
		if len(s) < 1<<16 {
			f.Add([]byte(s))
		}
	}
	for _, data := range decodeCorpus(f, r) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := checkFastDecode(r, data, 9, subjectFor(data)); err != nil {
			t.Fatal(err)
		}
	})
}

// processCPU is the process's CPU time (user + system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeCommit_Realistic decodes every fixture ledger commit in
// today's form (currentCommits: 351 commits, 1269 events) per op: go-json
// alone, DecodeCommit, and the read-ahead workers' owned decode.
func BenchmarkDecodeCommit_Realistic(b *testing.B) {
	r := NewCatalogRegistry()
	msgs := currentCommits(b, r)
	size, evs := 0, 0
	for _, m := range msgs {
		size += len(m.Data)
		got, err := r.DecodeCommit(m.Data, m.Seq, m.Subject)
		if err != nil {
			b.Fatal(err)
		}
		evs += len(got)
	}
	// owned decodes as a read-ahead worker does: into one slice per 32
	// messages.
	var all []Event
	owned := func(data []byte, seq uint64, subject string) (evs []Event, err error) {
		if cap(all)-len(all) < 8 {
			all = make([]Event, 0, eventsPerChunk)
		}
		all, evs, err = r.decodeOwned(all, data, seq, subject)
		return evs, err
	}
	for _, c := range []struct {
		name string
		fn   func([]byte, uint64, string) ([]Event, error)
	}{{"gojson", r.decodeGoJSON}, {"fast", r.DecodeCommit}, {"owned", owned}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			cpu := processCPU()
			for b.Loop() {
				for _, m := range msgs {
					if _, err := c.fn(m.Data, m.Seq, m.Subject); err != nil {
						b.Fatal(err)
					}
				}
			}
			// The process's CPU (the GC's included) moves far less than wall
			// time on a shared machine.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*evs), "cpu-ns/event")
		})
	}
}
