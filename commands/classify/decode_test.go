package classify

import (
	"encoding/json"
	"strings"
	"testing"
)

// deepCauseJSON is an error whose cause nests n levels below the outermost
// object; the innermost one is a 429. Every wrapper carries a little text so
// the input grows like a real wrapped chain (~40 bytes a level).
func deepCauseJSON(n int) []byte {
	var b strings.Builder
	b.Grow(n * 48)
	b.WriteString(`{"id":"deep","status":429,"message":"rate limited",`)
	for i := 0; i < n; i++ {
		b.WriteString(`"cause":{"message":"wrapped \u00e9 error",`)
	}
	b.WriteString(`"status":503`)
	for i := 0; i < n; i++ {
		b.WriteString(`}`)
	}
	b.WriteString(`}`)
	return []byte(b.String())
}

func causeDepth(e *ProviderError) int {
	n := 0
	for c := e.Cause; c != nil; c = c.Cause {
		n++
	}
	return n
}

func TestUnmarshal_DeepCauseIsTruncatedAndBounded(t *testing.T) {
	// 9 998 causes + the outer object is the deepest nesting encoding/json
	// accepts at all (its limit is 10 000 including the outer object).
	for _, n := range []int{MaxDecodedCauses - 1, MaxDecodedCauses, MaxDecodedCauses + 1, 5000, 9998} {
		data := deepCauseJSON(n)
		var pe ProviderError
		if err := json.Unmarshal(data, &pe); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		wantDepth := min(n, MaxDecodedCauses)
		if d := causeDepth(&pe); d != wantDepth {
			t.Fatalf("n=%d: decoded %d causes, want %d", n, d, wantDepth)
		}
		if pe.CauseTruncated != (n > MaxDecodedCauses) {
			t.Fatalf("n=%d: CauseTruncated=%v", n, pe.CauseTruncated)
		}
		if pe.Cause.Message != "wrapped é error" || pe.ID != "deep" {
			t.Fatalf("n=%d: decoded %+v", n, pe.Cause)
		}
		r := Classify(&pe)
		if !r.Reason.Valid() || r.Reason != ReasonRateLimit {
			t.Fatalf("n=%d: reason %q", n, r.Reason)
		}
		// The walk follows maxCauseDepth causes: one below that is cut too
		// (31 decoded, 25 walked), and the evidence says so.
		if r.Evidence.CauseTruncated != (n > maxCauseDepth) {
			t.Fatalf("n=%d: evidence cause_truncated=%v", n, r.Evidence.CauseTruncated)
		}
	}
}

// TestUnmarshal_DeepCauseDirect: called directly (no encoding/json depth
// limit in front), 10 000 and 100 000 levels decode with bounded
// allocations, never recursing past MaxDecodedCauses.
func TestUnmarshal_DeepCauseDirect(t *testing.T) {
	for _, n := range []int{10_000, 100_000} {
		data := deepCauseJSON(n)
		var pe ProviderError
		allocs := testing.AllocsPerRun(3, func() {
			if err := pe.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
		})
		if causeDepth(&pe) != MaxDecodedCauses || !pe.CauseTruncated {
			t.Fatalf("n=%d: depth %d truncated %v", n, causeDepth(&pe), pe.CauseTruncated)
		}
		// About 3 allocations per kept level; nothing per dropped level.
		if allocs > 8*MaxDecodedCauses {
			t.Fatalf("n=%d: %.0f allocs per decode", n, allocs)
		}
		if r := Classify(&pe); r.Reason != ReasonRateLimit {
			t.Fatalf("n=%d: reason %s", n, r.Reason)
		}
	}
}

// TestUnmarshal_10000DeepAllocationBudget: through json.Unmarshal, the
// bytes allocated stay a small multiple of the input (encoding/json's own
// validation included), where the old decoder allocated ~1 GB at 5 000
// levels.
func TestUnmarshal_10000DeepAllocationBudget(t *testing.T) {
	data := deepCauseJSON(9998)
	bytes := allocBytes(func() {
		var pe ProviderError
		if err := json.Unmarshal(data, &pe); err != nil {
			t.Fatal(err)
		}
	})
	if budget := uint64(4*len(data) + 256<<10); bytes > budget {
		t.Fatalf("json.Unmarshal of %d bytes allocated %d bytes (budget %d)", len(data), bytes, budget)
	}
	direct := allocBytes(func() {
		var pe ProviderError
		if err := pe.UnmarshalJSON(deepCauseJSONCached); err != nil {
			t.Fatal(err)
		}
	})
	if direct > 64<<10 {
		t.Fatalf("UnmarshalJSON of 100 000 levels allocated %d bytes", direct)
	}
}

var deepCauseJSONCached = deepCauseJSON(100_000)

func TestUnmarshal_ShapesAndErrors(t *testing.T) {
	var e ProviderError
	in := ` {"Message":"a","MESSAGE":"b","message":"c","cause":null,"headers":{"A":"1"},"headers":{"B":["x",2]},
		"unknown":{"deep":[[[{"x":"}]"}]]]},"cause":{"message":"inner","cause":"leaf"}} `
	if err := e.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if e.Message != "c" || e.Header("a") != "1" || e.Header("b") != "x, 2" || e.Cause == nil || e.Cause.Message != "inner" ||
		e.Cause.Cause == nil || e.Cause.Cause.Message != "leaf" || e.CauseTruncated {
		t.Fatalf("decoded %+v", e)
	}
	if err := e.UnmarshalJSON([]byte("null")); err != nil || e.Message != "" {
		t.Fatalf("null: %v %+v", err, e)
	}
	for _, bad := range []string{
		``, `{`, `{"message":"x"`, `{"message" "x"}`, `{"message":"x",}`, `{"message":"x"} trailing`,
		`{"cause":{"message":"x"]}`, `{"body":{"a":]}`, `{"body":{"a":1]}`, `{"id":tru}`, `{"message":"a` + "\x01" + `"}`,
		`{"unknown":[1,2}`, `{"cause":[1]}`, `{"cause":true}`, `{"headers":[1]}`, `"x"`,
	} {
		var e ProviderError
		if err := e.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func allocBytes(f func()) uint64 {
	var before, after runtimeMemStats
	readMem(&before)
	f()
	readMem(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkUnmarshalDeepCause: the cost per decode grows with the input's
// bytes only (a fast skip), not with the nesting beyond MaxDecodedCauses:
// compare ns/op and B/op across depths.
//
//	go test ./commands/classify/ -run '^$' -bench UnmarshalDeepCause -benchmem
func BenchmarkUnmarshalDeepCause(b *testing.B) {
	for _, n := range []int{32, 100, 1000, 5000, 9998} {
		data := deepCauseJSON(n)
		b.Run("levels="+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var pe ProviderError
				if err := json.Unmarshal(data, &pe); err != nil {
					b.Fatal(err)
				}
				Classify(&pe)
			}
		})
	}
}

// statusCode is the status under its Node name (reference §2.7); status
// wins when both are given, in either order, and one that is no status
// is ignored and named.
func TestUnmarshal_StatusCode(t *testing.T) {
	for _, c := range []struct {
		in     string
		status int
	}{
		{`{"statusCode":401}`, 401},
		{`{"statuscode":"429"}`, 429},
		{`{"status":429,"statusCode":401}`, 429},
		{`{"statusCode":401,"status":429}`, 429},
		{`{"cause":{"statusCode":503}}`, 0},
		{`{"statusCode":500,"status":null}`, 500},
		{`{"status":null,"statusCode":500}`, 500},
		{`{"statusCode":true}`, 0},
		{`{"statusCode":1000,"message":"x"}`, 0},
	} {
		var e ProviderError
		if err := e.UnmarshalJSON([]byte(c.in)); err != nil || e.Status != c.status {
			t.Errorf("%s: status %d, %v; want %d", c.in, e.Status, err, c.status)
		}
	}
	// One that is no status is ignored (named), as before it was read.
	var e ProviderError
	if err := e.UnmarshalJSON([]byte(`{"statusCode":{"x":1},"cause":{"statusCode":true}}`)); err != nil ||
		strings.Join(e.IgnoredKeys(), ",") != "cause.statusCode,statusCode" {
		t.Fatalf("statusCode that is no status: %v, ignored %v", err, e.IgnoredKeys())
	}
}
