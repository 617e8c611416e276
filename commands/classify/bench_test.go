package classify

import (
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkClassifyVectors classifies every shared vector once per
// iteration and reports ns/error and allocs/error besides the per-iteration
// numbers. Command (docs/performance.md):
//
//	go test ./commands/classify/ -run '^$' -bench ClassifyVectors -benchmem
func BenchmarkClassifyVectors(b *testing.B) {
	vs := loadVectors(b, sharedVectorsPath(b))
	inputs := make([]*ProviderError, len(vs))
	for i, v := range vs {
		inputs[i] = v.Input
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, in := range inputs {
			Classify(in)
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(len(inputs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/error")
}

// BenchmarkClassifyLargeMessage: a 10 MB message (bounded by the scan window).
func BenchmarkClassifyLargeMessage(b *testing.B) {
	e := &ProviderError{Status: 400, Message: strings.Repeat("lorem ipsum dolor sit amet ", 400_000) + "prompt is too long"}
	b.ReportAllocs()
	for b.Loop() {
		Classify(e)
	}
}

// TestClassifyVectors_MedianLatency logs the median and p99 time per vector
// (no assertion: timing depends on the machine; the number goes in
// docs/performance.md).
func TestClassifyVectors_MedianLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	vs := loadVectors(t, sharedVectorsPath(t))
	const rounds = 200
	per := make([]time.Duration, len(vs))
	for i, v := range vs {
		Classify(v.Input) // warm
		start := time.Now()
		for r := 0; r < rounds; r++ {
			Classify(v.Input)
		}
		per[i] = time.Since(start) / rounds
	}
	sort.Slice(per, func(i, j int) bool { return per[i] < per[j] })
	t.Logf("per-error latency over %d vectors: median %v, p90 %v, p99 %v, max %v",
		len(per), per[len(per)/2], per[len(per)*90/100], per[len(per)*99/100], per[len(per)-1])
}
