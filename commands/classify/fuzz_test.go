package classify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fledger/fledger/internal/testutil"
)

// FuzzClassify: never panics, always one of the sixteen reasons and one of
// the five dispositions, evidence within bounds, and bounded time. The seed
// corpus is every shared vector and our own fixtures, plus hostile shapes.
//
//	go test ./commands/classify/ -run '^$' -fuzz FuzzClassify -fuzztime 60s
func FuzzClassify(f *testing.F) {
	add := func(e *ProviderError) {
		f.Add(e.Provider, e.Status, e.Code, e.Type, e.Message, e.Body, e.Name, headerLine(e.Headers), causeMessage(e))
	}
	for _, v := range loadVectors(f, sharedVectorsPath(f)) {
		add(v.Input)
	}
	files, _ := filepath.Glob(filepath.Join(testutil.Root(f), "fixtures", "classify", "*.jsonl"))
	for _, file := range files {
		for _, v := range loadVectors(f, file) {
			add(v.Input)
		}
	}
	f.Add("openrouter", 400, "", "", strings.Repeat(`{"error":{"message":"`, 40), "", "", "", "")
	f.Add("", 0, "", "", strings.Repeat("[", 5000), strings.Repeat(`{'a': b'`, 300), "AbortError", "retry-after: 1e309", "")
	f.Add("xai", 429, "\x00\xff", "", "\xff\xfe402 payment required http 402", "", "", "retry-after-ms: NaN", "got 402")

	f.Fuzz(func(t *testing.T, provider string, status int, code, typ, message, body, name, headers, cause string) {
		e := &ProviderError{Provider: provider, Status: status, Code: code, Type: typ, Message: message, Body: body, Name: name}
		if headers != "" {
			k, v, _ := strings.Cut(headers, ":")
			e.Headers = map[string]string{k: strings.TrimSpace(v), "date": "Tue, 26 Mar 2024 19:59:59 GMT"}
		}
		if cause != "" {
			e.Cause = &ProviderError{Message: cause, Cause: &ProviderError{Body: cause, Status: status}}
		}
		start := time.Now()
		r := Classify(e)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("slow: %v", d)
		}
		checkResult(t, r)
		// The same input through JSON (the CLI path) also classifies.
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		var back ProviderError
		if json.Unmarshal(b, &back) == nil {
			checkResult(t, Classify(&back))
		}
	})
}

func checkResult(t *testing.T, r Result) {
	t.Helper()
	if !r.Reason.Valid() {
		t.Fatalf("invalid reason %q", r.Reason)
	}
	if _, err := ParseDisposition(string(r.Disposition)); err != nil {
		t.Fatalf("invalid disposition %q", r.Disposition)
	}
	if r.Evidence.Rule == "" || r.Evidence.Source == "" {
		t.Fatalf("no evidence: %+v", r.Evidence)
	}
	if utf8.RuneCountInString(r.Evidence.Match) > matchPreview+1 {
		t.Fatalf("evidence too long: %d runes", utf8.RuneCountInString(r.Evidence.Match))
	}
	if r.RetryAfterMs < 0 || r.RetryAfterMs > maxRetryAfterMs {
		t.Fatalf("retry_after_ms %d", r.RetryAfterMs)
	}
	if (r.RequestSizeCeiling != nil) != (r.Reason == ReasonContextOverflow && r.Disposition != DispositionCompaction && r.RequestSizeCeiling != nil) {
		t.Fatalf("ceiling %+v with %s/%s", r.RequestSizeCeiling, r.Reason, r.Disposition)
	}
	if r.Reason == ReasonContextOverflow && r.RequestSizeCeiling == nil && r.Disposition == DispositionFailover {
		t.Fatalf("overflow without a ceiling must be compaction (or a refusal)")
	}
}

func headerLine(h map[string]string) string {
	for k, v := range h {
		return k + ": " + v
	}
	return ""
}

func causeMessage(e *ProviderError) string {
	if e.Cause != nil {
		return e.Cause.Message
	}
	return ""
}

// TestFuzzCorpusDirIsOptional documents where `go test -fuzz` keeps new
// failing inputs (testdata/fuzz/FuzzClassify); they are replayed by plain
// `go test` once committed.
func TestFuzzCorpusDirIsOptional(t *testing.T) {
	if _, err := os.Stat(filepath.Join("testdata", "fuzz", "FuzzClassify")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
