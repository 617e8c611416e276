package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// `fledger decisions --json` prints the same record, byte for byte, as a
// line of `fledger export --format jsonl`: one decision record type.
func TestDecisions_JSONIsTheExportRecord(t *testing.T) {
	data := t.TempDir()
	if out, err := runFledger2Out(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "chain-overload.yaml")); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	decisions, err := runFledger2Out(t, "--data", data, "decisions", "--json")
	if err != nil {
		t.Fatalf("decisions: %v\n%s", err, decisions)
	}
	exported, err := runFledger2Out(t, "--data", data, "export", "--format", "jsonl")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, exported)
	}
	if decisions != exported || strings.Count(decisions, "\n") < 4 || !strings.HasPrefix(decisions, `{"event":"model_fallback_decision","tags":[`) {
		t.Fatalf("decisions --json:\n%s\nexport --format jsonl:\n%s", decisions, exported)
	}
}

// runFledger2Out is runFledger2's stdout (stderr holds progress and
// warnings).
func runFledger2Out(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, _, err := runFledger2(t, args...)
	return out, err
}
