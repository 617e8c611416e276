package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestClassifyCmd_DeepCauseIsBounded: a line whose cause nests as deep as
// encoding/json allows (9 998 causes under the outer object, ~10 000
// levels) classifies with a valid reason and a bounded allocation budget
// (it once took 25 s and over 1 GB at 5 000 levels); one level deeper is a
// malformed line, reported at once.
func TestClassifyCmd_DeepCauseIsBounded(t *testing.T) {
	line := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"id":"deep","status":429,"message":"too many requests",`)
		for i := 0; i < n; i++ {
			b.WriteString(`"cause":{"message":"wrapped",`)
		}
		b.WriteString(`"status":503`)
		b.WriteString(strings.Repeat("}", n+1))
		return b.String() + "\n"
	}
	allocated := func(in string) (string, uint64, error) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := runCLI(t, in, "classify")
		runtime.ReadMemStats(&after)
		return out, after.TotalAlloc - before.TotalAlloc, err
	}
	allocated(line(1))               // one-time initialisation
	_, base, _ := allocated(line(1)) // the command's own set-up
	in := line(9998)
	out, total, err := allocated(in)
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeLines(t, out)
	if len(rows) != 1 || rows[0]["reason"] != "rate_limit" {
		t.Fatalf("output: %s", out)
	}
	if ev, _ := rows[0]["evidence"].(map[string]any); ev["cause_truncated"] != true {
		t.Fatalf("evidence does not note the truncation: %s", out)
	}
	// Reading the line, encoding/json's validation and our decode: a few
	// times the line's size.
	t.Logf("%d-byte line: %d bytes allocated beyond a 1-level line's %d", len(in), total-base, base)
	if got, budget := total-base, uint64(8*len(in)); got > budget {
		t.Fatalf("classify of a %d-byte line allocated %d bytes (budget %d)", len(in), got, budget)
	}

	out, err = runCLI(t, line(10000), "classify")
	if err == nil || !strings.Contains(out, "max depth") {
		t.Fatalf("10 001 levels: err %v, out %s", err, out)
	}
}
