package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runFledger(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// `fledger run --check` passes on every fixture scenario, all runs sharing
// one --data directory (each run in its own namespace).
func TestRunCmd_EveryFixturePassesCheck(t *testing.T) {
	data := t.TempDir()
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "scenarios", "*.yaml"))
	if len(files) < 8 {
		t.Fatalf("%d scenarios", len(files))
	}
	for _, f := range files {
		out, err := runFledger(t, "--data", data, "run", f, "--check")
		if err != nil {
			t.Fatalf("%s: %v\n%s", f, err, out)
		}
		if !strings.Contains(out, "check: every expectation met") {
			t.Fatalf("%s:\n%s", f, out)
		}
	}
	out, err := runFledger(t, "--data", data, "run", files[0], "--json")
	if err != nil || !strings.HasPrefix(out, "{") {
		t.Fatalf("--json: %v\n%s", err, out)
	}
}

// A scenario whose expectation is wrong exits 1 with the difference.
func TestRunCmd_CheckFailsWithExit1(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "scenarios", "context-overflow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), "outcome: stopped", "outcome: succeeded", 1)
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runFledger(t, "--data", t.TempDir(), "run", f, "--check")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(out, "outcome\n    want \"succeeded\"\n    got  \"stopped\"") {
		t.Fatalf("output:\n%s", out)
	}
}

// A filter value outside its closed set is refused, naming the set,
// before any ledger is opened (an empty table would read as "none").
func TestDecisions_UnknownReasonRefused(t *testing.T) {
	_, err := runFledger(t, "--data", t.TempDir(), "decisions", "--reason", "bogus")
	if err == nil || !strings.Contains(err.Error(), `--reason "bogus" is not a failure reason (one of auth, `) {
		t.Fatalf("error %v", err)
	}
}
