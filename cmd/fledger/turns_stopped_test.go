package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A stopped turn's row says why it stopped (its disposition): an abort's
// or a refusal's reason column alone ("unknown", or the error's class)
// does not.
func TestTurns_StoppedRowNamesTheDisposition(t *testing.T) {
	data := t.TempDir()
	scen := filepath.Join("..", "..", "fixtures", "scenarios", "stops-and-advances.yaml")
	if out, err := runFledger(t, "--data", data, "run", scen, "--agent", "sa"); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	out, err := runFledger(t, "--data", data, "turns", "--outcome", "stopped")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"STARTED               AGENT  TURN                   SESSION  REQUESTED     ANSWERED BY  ATTEMPTS  OUTCOME            REASON   DURATION",
		"2026-03-21T17:02:00Z  sa     refusal-ends-the-turn  dm-xia   openai/gpt-5  -            1         stopped (refusal)  timeout  200ms",
	}
	if got := strings.Split(strings.TrimRight(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("turns --outcome stopped:\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}
