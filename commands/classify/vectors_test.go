package classify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
)

// vector is one line of shared/vectors/classify.jsonl or fixtures/classify/*.jsonl.
type vector struct {
	ID     string
	Source string
	Input  *ProviderError
	Expect expectation
	Line   int
	File   string
}

// expectation: reason (exact) or accept (any of), and optionally a
// disposition. Our own fixtures may also pin status, retry_after_ms, the
// ceiling and the deciding rule.
type expectation struct {
	Reason       Reason      `json:"reason"`
	Accept       []Reason    `json:"accept"`
	Disposition  Disposition `json:"disposition"`
	Status       *int        `json:"status"`
	RetryAfterMs *int64      `json:"retry_after_ms"`
	Ceiling      *Ceiling    `json:"request_size_ceiling"`
	Rule         string      `json:"rule"`
	Now          string      `json:"now"`
}

// sharedVectorsPath is ../shared/vectors/classify.jsonl next to the repo
// when present, else our copy under fixtures/vectors.
func sharedVectorsPath(tb testing.TB) string {
	root := testutil.Root(tb)
	p := filepath.Join(root, "..", "shared", "vectors", "classify.jsonl")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return filepath.Join(root, "fixtures", "vectors", "classify.jsonl")
}

func loadVectors(tb testing.TB, path string) []vector {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var meta struct {
			ID     string      `json:"id"`
			Source string      `json:"source"`
			Expect expectation `json:"expect"`
		}
		if err := json.Unmarshal(b, &meta); err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
		in := &ProviderError{}
		if err := json.Unmarshal(b, in); err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, vector{ID: meta.ID, Source: meta.Source, Input: in, Expect: meta.Expect, Line: line, File: filepath.Base(path)})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// check returns "" when got satisfies the expectation, else what differs.
func (v vector) check(got Result) string {
	var bad []string
	e := v.Expect
	switch {
	case len(e.Accept) > 0:
		ok := false
		for _, r := range e.Accept {
			ok = ok || got.Reason == r
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("reason %s, want one of %v", got.Reason, e.Accept))
		}
	case e.Reason != "":
		if got.Reason != e.Reason {
			bad = append(bad, fmt.Sprintf("reason %s, want %s", got.Reason, e.Reason))
		}
	}
	if e.Disposition != "" && got.Disposition != e.Disposition {
		bad = append(bad, fmt.Sprintf("disposition %s, want %s", got.Disposition, e.Disposition))
	}
	if e.Status != nil && got.Status != *e.Status {
		bad = append(bad, fmt.Sprintf("status %d, want %d", got.Status, *e.Status))
	}
	if e.RetryAfterMs != nil && got.RetryAfterMs != *e.RetryAfterMs {
		bad = append(bad, fmt.Sprintf("retry_after_ms %d, want %d", got.RetryAfterMs, *e.RetryAfterMs))
	}
	if e.Ceiling != nil && (got.RequestSizeCeiling == nil || *got.RequestSizeCeiling != *e.Ceiling) {
		bad = append(bad, fmt.Sprintf("ceiling %v, want %v", got.RequestSizeCeiling, *e.Ceiling))
	}
	if e.Rule != "" && got.Evidence.Rule != e.Rule {
		bad = append(bad, fmt.Sprintf("rule %s, want %s", got.Evidence.Rule, e.Rule))
	}
	if !got.Reason.Valid() {
		bad = append(bad, fmt.Sprintf("invalid reason %q", got.Reason))
	}
	return strings.Join(bad, "; ")
}

func (v vector) classify(tb testing.TB) Result {
	if v.Expect.Now != "" {
		now, err := time.Parse(time.RFC3339, v.Expect.Now)
		if err != nil {
			tb.Fatalf("%s: expect.now: %v", v.ID, err)
		}
		return ClassifyAt(v.Input, now)
	}
	return Classify(v.Input)
}

// TestClassify_SharedVectors is the bar: 100% of OC-* (OpenClaw's
// own test inputs) and at least 98% of RE-* (real errors from bug reports).
func TestClassify_SharedVectors(t *testing.T) {
	path := sharedVectorsPath(t)
	vs := loadVectors(t, path)
	t.Logf("vectors: %s (%d)", path, len(vs))
	type tally struct{ pass, total int }
	groups := map[string]*tally{}
	var failures []string
	for _, v := range vs {
		g := strings.SplitN(v.ID, "-", 2)[0]
		if groups[g] == nil {
			groups[g] = &tally{}
		}
		groups[g].total++
		got := v.classify(t)
		if msg := v.check(got); msg != "" {
			failures = append(failures, fmt.Sprintf("%s: %s (rule %s, field %s, match %q)", v.ID, msg, got.Evidence.Rule, got.Evidence.Field, got.Evidence.Match))
			continue
		}
		groups[g].pass++
	}
	sort.Strings(failures)
	for _, f := range failures {
		t.Log("FAIL " + f)
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		c := groups[g]
		t.Logf("%s: %d/%d pass (%.1f%%)", g, c.pass, c.total, 100*float64(c.pass)/float64(c.total))
	}
	if c := groups["OC"]; c == nil || c.pass != c.total {
		t.Errorf("OC-* must pass 100%%")
	}
	if c := groups["RE"]; c == nil || float64(c.pass) < 0.98*float64(c.total) {
		t.Errorf("RE-* must pass at least 98%%")
	}
}

// TestClassify_OwnFixtures runs fixtures/classify/*.jsonl: several cases per
// rule family, every one must pass.
func TestClassify_OwnFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testutil.Root(t), "fixtures", "classify", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	n := 0
	for _, f := range files {
		if heldoutFile(f) {
			continue
		}
		for _, v := range loadVectors(t, f) {
			n++
			if v.Source == "" {
				t.Errorf("%s:%d %s: every fixture needs a source", v.File, v.Line, v.ID)
			}
			got := v.classify(t)
			if msg := v.check(got); msg != "" {
				t.Errorf("%s:%d %s: %s (rule %s, field %s, match %q)", v.File, v.Line, v.ID, msg, got.Evidence.Rule, got.Evidence.Field, got.Evidence.Match)
			}
		}
	}
	t.Logf("%d fixtures in %d files", n, len(files))
}

// TestFixtures_VectorCopyMatchesShared keeps fixtures/vectors in step with
// the shared file when both exist.
func TestFixtures_VectorCopyMatchesShared(t *testing.T) {
	root := testutil.Root(t)
	shared, err := os.ReadFile(filepath.Join(root, "..", "shared", "vectors", "classify.jsonl"))
	if err != nil {
		t.Skip("shared vectors not present")
	}
	own, err := os.ReadFile(filepath.Join(root, "fixtures", "vectors", "classify.jsonl"))
	if err != nil {
		t.Fatalf("fixtures/vectors/classify.jsonl missing: %v", err)
	}
	if !bytes.Equal(shared, own) {
		t.Errorf("fixtures/vectors/classify.jsonl differs from ../shared/vectors/classify.jsonl; copy it again")
	}
}
