package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fledger/fledger/commands/classify"
)

// vector is one classification input of the fixtures.
type vector struct {
	in  *classify.ProviderError
	now time.Time
}

// findFixtures returns dir when it exists, else the first "fixtures"
// directory found walking up from the working directory.
func findFixtures(dir string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return "", err
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "fixtures")
		if _, err := os.Stat(filepath.Join(p, "vectors", "classify.jsonl")); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no fixtures/vectors/classify.jsonl above %s (use --fixtures)", wd)
		}
	}
}

// loadVectors reads every classification vector under fixtures:
// vectors/classify.jsonl and classify/*.jsonl.
func loadVectors(fixtures string) ([]vector, error) {
	files, err := filepath.Glob(filepath.Join(fixtures, "classify", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	files = append([]string{filepath.Join(fixtures, "vectors", "classify.jsonl")}, files...)
	var out []vector
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for line := 1; sc.Scan(); line++ {
			b := bytes.TrimSpace(sc.Bytes())
			if len(b) == 0 {
				continue
			}
			in := &classify.ProviderError{}
			if err := json.Unmarshal(b, in); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			var meta struct {
				Expect struct {
					Now string `json:"now"`
				} `json:"expect"`
			}
			_ = json.Unmarshal(b, &meta)
			v := vector{in: in}
			if meta.Expect.Now != "" {
				if v.now, err = time.Parse(time.RFC3339, meta.Expect.Now); err != nil {
					return nil, fmt.Errorf("%s:%d: expect.now: %w", path, line, err)
				}
			}
			out = append(out, v)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// classifyResult: throughput over all vectors, and the distribution of
// each vector's mean time.
type classifyResult struct {
	Vectors       int
	PerSecond     float64
	P50, P90, P99 time.Duration
}

// measureClassify classifies every vector rounds times, in 5 batches of
// back-to-back calls per vector, and returns classifications/s over all
// calls and percentiles over vectors of each vector's best batch mean:
// the CPU cost of one classification, with preemption by other processes
// on a shared machine filtered out (the throughput keeps it).
func measureClassify(vs []vector, rounds int) classifyResult {
	const batches = 5
	per := make([]time.Duration, len(vs))
	n := max(rounds/batches, 1)
	var total time.Duration
	calls := 0
	for i, v := range vs {
		classify.ClassifyAt(v.in, v.now) // warm
		best := time.Duration(1<<63 - 1)
		for range batches {
			t := time.Now()
			for range n {
				classify.ClassifyAt(v.in, v.now)
			}
			d := time.Since(t)
			total += d
			calls += n
			best = min(best, d/time.Duration(n))
		}
		per[i] = best
	}
	sort.Slice(per, func(i, j int) bool { return per[i] < per[j] })
	return classifyResult{Vectors: len(vs), PerSecond: rate(calls, total),
		P50: pct(per, 50), P90: pct(per, 90), P99: pct(per, 99)}
}

// pct returns the p-th percentile of sorted (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

func sortedCopy(d []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}
