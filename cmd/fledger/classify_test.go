package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs `fledger <args>` with stdin and returns stdout and the error.
func runCLI(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not JSON: %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	return rows
}

func TestClassifyCmd_OneLinePerInputInOrder(t *testing.T) {
	in := `{"id":"a","status":429,"message":"Too Many Requests","headers":{"Retry-After":"7"}}
{"id":"b","status":"402","message":"Weekly usage limit exhausted."}

{"id":"c","provider":"groq","status":413,"message":"Request too large on tokens per minute (TPM): Limit 8000, Requested 8098"}
{"id":"d","message":"prompt is too long","cause":{"message":"x"}}
`
	out, err := runCLI(t, in, "classify")
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeLines(t, out)
	if len(rows) != 4 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	want := []struct{ id, reason, disp string }{
		{"a", "rate_limit", "failover"}, {"b", "rate_limit", "failover"}, {"c", "context_overflow", "failover"}, {"d", "context_overflow", "compaction"},
	}
	for i, w := range want {
		r := rows[i]
		if r["id"] != w.id || r["reason"] != w.reason || r["disposition"] != w.disp {
			t.Errorf("row %d: %v", i, r)
		}
		for _, k := range []string{"id", "reason", "status", "disposition", "retry_after_ms", "request_size_ceiling", "evidence"} {
			if _, ok := r[k]; !ok {
				t.Errorf("row %d: missing %q", i, k)
			}
		}
	}
	if rows[0]["retry_after_ms"].(float64) != 7000 {
		t.Errorf("retry_after_ms = %v", rows[0]["retry_after_ms"])
	}
	if c, ok := rows[2]["request_size_ceiling"].(map[string]any); !ok || c["limit_tokens"].(float64) != 8000 || c["requested_tokens"].(float64) != 8098 {
		t.Errorf("ceiling = %v", rows[2]["request_size_ceiling"])
	}
	if rows[1]["status"].(float64) != 402 {
		t.Errorf("numeric-string status: %v", rows[1]["status"])
	}
}

func TestClassifyCmd_MalformedLinesReportedOthersClassified(t *testing.T) {
	in := "{\"id\":\"ok1\",\"status\":500}\n{not json\n[1,2]\n{\"id\":\"ok2\",\"status\":true}\n{\"id\":\"ok3\",\"code\":\"ECONNRESET\"}\n"
	out, err := runCLI(t, in, "classify")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("want exit status 1, got %v", err)
	}
	rows := decodeLines(t, out)
	if len(rows) != 5 {
		t.Fatalf("%d rows:\n%s", len(rows), out)
	}
	if rows[0]["reason"] != "server_error" || rows[4]["reason"] != "timeout" {
		t.Errorf("good lines: %v / %v", rows[0], rows[4])
	}
	for i, line := range []float64{2, 3, 4} {
		r := rows[i+1]
		if r["line"] != line || r["error"] == nil || r["reason"] != nil {
			t.Errorf("error row for line %v: %v", line, r)
		}
	}
}

func TestClassifyCmd_FilesAndStdinDash(t *testing.T) {
	dir := t.TempDir()
	f1 := filepath.Join(dir, "one.jsonl")
	if err := os.WriteFile(f1, []byte("{\"id\":\"f1\",\"status\":401}\n{bad\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "{\"id\":\"s1\",\"status\":529}\n", "classify", f1, "-", filepath.Join(dir, "missing.jsonl"))
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("want exit 1, got %v", err)
	}
	rows := decodeLines(t, out)
	if len(rows) != 4 {
		t.Fatalf("rows:\n%s", out)
	}
	if rows[0]["id"] != "f1" || rows[1]["file"] != f1 || rows[1]["line"] != float64(2) || rows[2]["id"] != "s1" || rows[3]["error"] == nil {
		t.Errorf("rows: %v", rows)
	}
}

func TestClassifyCmd_LongLinesWorkAndOversizedAreReported(t *testing.T) {
	big := strings.Repeat("x", 10<<20)
	in := `{"id":"big","status":400,"message":"prompt is too long ` + big + `"}` + "\n" + `{"id":"next","status":429}` + "\n"
	out, err := runCLI(t, in, "classify")
	if err != nil {
		t.Fatal(err)
	}
	rows := decodeLines(t, out)
	if len(rows) != 2 || rows[0]["reason"] != "context_overflow" || rows[1]["reason"] != "rate_limit" {
		t.Fatalf("rows: %v", rows)
	}
	out, err = runCLI(t, in, "classify", "--max-line-bytes", "1024")
	if err == nil {
		t.Fatal("want exit status 1")
	}
	rows = decodeLines(t, out)
	if len(rows) != 2 || rows[0]["line"] != float64(1) || !strings.Contains(rows[0]["error"].(string), "longer than") || rows[1]["reason"] != "rate_limit" {
		t.Fatalf("rows: %v", rows)
	}
}

func TestClassifyCmd_Table(t *testing.T) {
	out, err := runCLI(t, "{\"id\":\"t1\",\"status\":429,\"message\":\"Please try again in 2s\"}\n{oops\n", "classify", "--table")
	if err == nil {
		t.Fatal("want exit status 1 for the malformed line")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "rate_limit") || !strings.Contains(lines[1], "2000") || !strings.Contains(lines[2], "ERROR") {
		t.Fatalf("table:\n%s", out)
	}
}

func TestClassifyCmd_RedactsEvidence(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Zz9", 16)
	out, err := runCLI(t, `{"id":"k","message":"odd failure with `+key+`"}`+"\n", "classify")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, key) {
		t.Fatalf("key leaked: %s", out)
	}
}

func TestClassifyCmd_SharedVectorsAllClassify(t *testing.T) {
	path := filepath.Join("..", "..", "fixtures", "vectors", "classify.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err) // the copy is committed: its absence is a defect
	}
	out, err := runCLI(t, string(data), "classify")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(decodeLines(t, out)), bytes.Count(data, []byte("\n")); got != want {
		t.Fatalf("%d output lines for %d input lines", got, want)
	}
}

// The keys of an input's lines that are not provider error fields are
// named on stderr, once per input with how many lines had them and the
// first: a misspelt status is no status, and the lines are still
// classified (unknown keys stay allowed: providers add fields).
func TestClassifyCmd_IgnoredKeysWarned(t *testing.T) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(`{"id":"a","stauts":429,"mesage":"x"}
{"id":"b","status":429,"cause":{"statusCod":401}}
{"id":"c","statusCode":401}
`))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"classify"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	want := `fledger classify: stdin: ignored keys "stauts", "mesage", "cause.statusCod" (2 lines, the first line 1): not provider error fields (docs/classification.md, "Input and output")
`
	if errOut.String() != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", errOut.String(), want)
	}
	if rows := decodeLines(t, out.String()); len(rows) != 3 || rows[2]["reason"] != "auth" {
		t.Fatalf("%d rows: %s", len(rows), out.String())
	}
}
