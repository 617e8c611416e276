package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"unicode/utf8"
)

// strictScan names a refused key by its JSON pointer through arrays and
// nested objects, and the UTF-8 refusal by its field path.
func TestStrictScan_Paths(t *testing.T) {
	type item struct {
		A int `json:"a"`
	}
	type req struct {
		Items []item            `json:"items"`
		Tags  map[string]string `json:"tags"`
	}
	for _, c := range []struct{ body, want string }{
		{`{"items":[{"a":1},{"a":1,"a":2}]}`, `key "a" is given twice (at /items/1/a); a key may appear once in an object`},
		{`{"items":[{"a":1},{"A":1}]}`, `key "A" (at /items/1/A) is not a field; keys are case-sensitive: the field is "a"`},
		{`{"tags":{"x":"1","X":"2","x":"3"}}`, `key "x" is given twice (at /tags/x); a key may appear once in an object`},
		{"{\"tags\":{\"x\":\"\xff\"}}", `tags.x: not valid UTF-8 (string at byte 13); every string must be UTF-8`},
		{`{"items":[],"items":[]}`, `key "items" is given twice (at /items); a key may appear once in an object`},
		{`{"items":[{"a":1}],"tags":{"x":"1","X":"2"}}`, ``},
	} {
		got := ""
		if ae := decodeRequest([]byte(c.body), new(req), true); ae != nil {
			got = ae.Detail
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.body, got, c.want)
		}
	}
}

// outcomeBody is a typical failed attempt's report: a provider error with
// headers, a body and a cause.
const outcomeBody = `{"turn_id":"turn-0001","agent":"main","attempt":2,"latency_ms":1834,` +
	`"error":{"status":429,"code":"rate_limit_exceeded","type":"rate_limit_error","message":"Rate limit reached for requests",` +
	`"headers":{"retry-after":"20","x-request-id":"req_0123456789abcdef","content-type":"application/json"},` +
	`"body":{"error":{"type":"rate_limit_error","message":"Rate limit reached for requests per minute"}},` +
	`"cause":{"code":"ECONNRESET","message":"socket hang up"},"provider":"anthropic","model":"claude-opus-4-6"}}`

// The cost of the strict decoder on an outcome report: before is what
// the decoder did until the duplicate scan (encoding/json, then a UTF-8
// walk only when the body has a \u escape or bytes that are not UTF-8),
// after is decodeRequest.
func BenchmarkDecodeOutcome(b *testing.B) {
	data := []byte(outcomeBody)
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var q OutcomeRequest
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&q); err != nil {
				b.Fatal(err)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
			if !utf8.Valid(data) || bytes.Contains(data, []byte(`\u`)) {
				b.Fatal("the body needs the walk")
			}
		}
	})
	b.Run("after", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var q OutcomeRequest
			if ae := decodeRequest(data, &q, true); ae != nil {
				b.Fatal(ae.Detail)
			}
		}
	})
}
