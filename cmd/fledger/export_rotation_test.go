package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The rotation runbook's step 7 (docs/operations.md): a JSONL file
// exported from the archived period goes on on the fresh stream created
// with --first-seq, one-shot and --follow alike, with a note on stderr.
func TestExport_RotationContinuesTheArchivedFile(t *testing.T) {
	scen := func(name string) string { return filepath.Join("..", "..", "fixtures", "scenarios", name+".yaml") }
	period1, fresh := t.TempDir(), t.TempDir()
	mustRun(t, "--data", period1, "run", scen("chain-overload"))
	mustRun(t, "--data", period1, "run", scen("stored-order"))
	archived := mustRun(t, "--data", period1, "export", "--format", "jsonl")
	ls := lines(archived)
	var rec struct {
		Seq    uint64
		TurnID string `json:"turnId"`
		Agent  string `json:"agent"`
	}
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	first := lastSeq(t, views{verify: mustRun(t, "--data", period1, "replay", "--verify")}) + 1

	mustRun(t, "--data", fresh, "--first-seq", strconv.FormatUint(first, 10), "config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	mustRun(t, "--data", fresh, "run", scen("rate-limit-storm"))
	next := mustRun(t, "--data", fresh, "export", "--format", "jsonl")
	if next == "" {
		t.Fatal("no record on the fresh stream")
	}
	note := func(file string) string {
		return fmt.Sprintf("fledger export: note: %s: its last record (seq %d) is before the stream's first sequence %d (a stream continuing an archived one, after a rotation): continuing after the archived range: the stream starts at %d\n",
			file, rec.Seq, first, first)
	}

	once := filepath.Join(t.TempDir(), "dec.jsonl")
	if err := os.WriteFile(once, []byte(archived), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runFledger2(t, "--data", fresh, "export", "--format", "jsonl", "--out", once)
	if err != nil || out != "" || errOut != note(once) {
		t.Fatalf("export --out: %v\nstdout %q\nstderr %q\nwant %q", err, out, errOut, note(once))
	}
	if b, _ := os.ReadFile(once); string(b) != archived+next {
		t.Fatalf("%s holds\n%s\nwant\n%s%s", once, b, archived, next)
	}

	followed := filepath.Join(t.TempDir(), "dec.jsonl")
	if err := os.WriteFile(followed, []byte(archived), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := exportFollow(t, []string{"--data", fresh}, followed)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(followed); string(b) == archived+next {
			break
		}
	}
	errOut, err = stop(1)
	if b, _ := os.ReadFile(followed); err != nil || errOut != note(followed) || string(b) != archived+next {
		t.Fatalf("export --follow --out: %v\nstderr %q (want %q)\nfile\n%s\nwant\n%s%s", err, errOut, note(followed), b, archived, next)
	}

	// A turn of the archived period, looked for on the fresh stream: the
	// answer says where older history is; on the archive itself it is
	// found, and a turn no stream has gets no hint on a stream from 1.
	hint := fmt.Sprintf("this stream starts at sequence %d, continuing an archived one: what came before is in the archive (mount it: docs/operations.md, \"Mount an archive\")", first)
	if _, err := runFledger(t, "--data", fresh, "explain", rec.TurnID, "--agent", rec.Agent); err == nil || !strings.HasSuffix(err.Error(), "; "+hint) {
		t.Errorf("explain of an archived turn on the fresh stream: %v, want it to end %q", err, hint)
	}
	mustRun(t, "--data", period1, "explain", rec.TurnID, "--agent", rec.Agent)
	if v := mustRun(t, "--data", fresh, "replay", "--verify"); !strings.Contains(v, fmt.Sprintf("note: this stream starts at sequence %d, continuing an archived one", first)) {
		t.Errorf("verify of the fresh stream says nothing of where it starts:\n%s", v)
	}
	if _, err := runFledger(t, "--data", period1, "explain", "no-such-turn"); err == nil || strings.Contains(err.Error(), "archive") {
		t.Errorf("explain of an unknown turn on a stream from sequence 1: %v, want no archive hint", err)
	}

	// Sequences of the archived period asked of the fresh stream: the
	// answer is empty, and says where they are; a range on the fresh
	// stream, or none asked, says nothing.
	for _, c := range []struct {
		args []string
		note bool
	}{
		{[]string{"events", "--to-seq", strconv.FormatUint(first-1, 10)}, true},
		{[]string{"events", "--from-seq", "1"}, true},
		{[]string{"events"}, false},
		{[]string{"events", "--from-seq", strconv.FormatUint(first, 10)}, false},
		{[]string{"decisions", "--from-seq", "10"}, true},
		{[]string{"decisions", "--to-seq", strconv.FormatUint(first-1, 10)}, true},
		{[]string{"decisions"}, false},
	} {
		_, errOut, err := runFledger2(t, append([]string{"--data", fresh}, c.args...)...)
		want := fmt.Sprintf("fledger %s: note: %s\n", c.args[0], hint)
		if err != nil || strings.Contains(errOut, want) != c.note {
			t.Errorf("fledger %s on the fresh stream: %v\nstderr %q\nwant the note %v: %q", strings.Join(c.args, " "), err, errOut, c.note, want)
		}
	}
	if _, errOut, _ := runFledger2(t, "--data", period1, "events", "--to-seq", "3"); strings.Contains(errOut, "archive") {
		t.Errorf("events on a stream from sequence 1: stderr %q, want no archive note", errOut)
	}
}
