package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fledger/fledger/replay"
)

// A divergence about a whole commit (Index -1 in --json) names the
// commit, not "event -1"; one about an event names its index.
func TestWriteVerify_DivergenceAt(t *testing.T) {
	tests := []struct {
		index int
		turn  string
		want  string
	}{
		{-1, "storm", "\nseq 32 (the whole commit) AttemptFailed (turn storm, agent evil, unexplained decision): no decision explains it\n"},
		{2, "storm", "\nseq 32 event 2 AttemptFailed (turn storm, agent evil, unexplained decision): no decision explains it\n"},
		// A stored turn id holding a line break stays on its line.
		{2, "x\nFAKE", "\nseq 32 event 2 AttemptFailed (turn x\\nFAKE, agent evil, unexplained decision): no decision explains it\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		writeVerify(&b, &replay.VerifyReport{Diverged: 1, Divergences: []replay.Divergence{{
			Seq: 32, Index: tt.index, Type: "AttemptFailed", Turn: tt.turn, Agent: "evil",
			Decision: replay.DecisionUnexplained, Message: "no decision explains it",
		}}})
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("index %d: output\n%s\nlacks %q", tt.index, b.String(), tt.want)
		}
	}
}

// The report's last line says whether the verification passed: a failed
// snapshot check is not left to the exit status and a line above "every
// recorded decision follows from its inputs" (which an operator checking
// an archive reads, docs/operations.md).
func TestWriteVerify_LastLineSaysASnapshotFailed(t *testing.T) {
	differs := replay.SnapshotCheck{Agent: "main", Seq: 7, Problem: `state.profiles.p.ErrorCount: fold has 1, snapshot 99`}
	unreadable := replay.SnapshotCheck{Agent: "other", Problem: "events: stored snapshot unreadable", Unreadable: true}
	equal := replay.SnapshotCheck{Agent: "main", Seq: 7, OK: true}
	skipped := replay.SnapshotCheck{Agent: "main", Seq: 7, Skipped: "written by code x"}
	for _, tc := range []struct {
		name      string
		snapshots []replay.SnapshotCheck
		last      string
	}{
		{"none", nil, "every recorded decision follows from its inputs"},
		{"equal", []replay.SnapshotCheck{equal}, "every recorded decision follows from its inputs"},
		{"skipped", []replay.SnapshotCheck{skipped}, "every recorded decision follows from its inputs"},
		{"differs", []replay.SnapshotCheck{differs}, "but 1 snapshot fails its check: the verification fails"},
		{"two failed", []replay.SnapshotCheck{differs, unreadable}, "but 2 snapshots fail their checks: the verification fails"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &replay.VerifyReport{Commits: 7, LastSeq: 7, Checked: map[string]int{replay.DecisionStart: 2}, Snapshots: tc.snapshots}
			var out bytes.Buffer
			writeVerify(&out, rep)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if got := lines[len(lines)-1]; got != tc.last {
				t.Fatalf("last line %q, want %q; report:\n%s", got, tc.last, out.String())
			}
			if ok := tc.last == "every recorded decision follows from its inputs"; rep.OK() != ok {
				t.Fatalf("OK() = %v, want %v", rep.OK(), ok)
			}
		})
	}
	var out bytes.Buffer
	writeVerify(&out, &replay.VerifyReport{Snapshots: []replay.SnapshotCheck{unreadable}})
	if !strings.Contains(out.String(), `snapshot of agent "other" is unreadable: events: stored snapshot unreadable`) {
		t.Fatalf("an unreadable snapshot's line:\n%s", out.String())
	}
}
