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
