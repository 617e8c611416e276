package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An explicit --to-seq 0 is refused by every command that takes it: it
// was read as "the stream's end", the opposite of what it says.
func TestToSeqZeroRefused(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	if out, err := runFledger(t, "--data", data, "run", scen); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, cmd := range []string{"events", "decisions", "replay"} {
		_, err := runFledger(t, "--data", data, cmd, "--to-seq", "0")
		if err == nil || !strings.HasPrefix(err.Error(), "--to-seq 0: stream sequences start at 1") {
			t.Errorf("%s --to-seq 0: %v", cmd, err)
		}
	}
	if out, err := runFledger(t, "--data", data, "events", "--to-seq", "1"); err != nil || strings.Count(out, "\n") != 2 {
		t.Fatalf("events --to-seq 1: %v\n%s", err, out)
	}
}
