package policy

import (
	"testing"

	"github.com/fledger/fledger/events"
)

// What counts as a user session command, and the sequences NoteSeq keeps.
func TestUserCommand_WhatCountsAndNoteSeq(t *testing.T) {
	cases := []struct {
		name string
		p    events.Payload
		want bool
	}{
		{"user selection", events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: "user"}, true},
		{"auto selection", events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: "auto"}, true},
		{"/model default", events.SessionModelCleared{Session: "s1", Cause: "default_command"}, true},
		{"reset clear", events.SessionModelCleared{Session: "s1", Cause: "reset"}, true},
		{"auto override recovered", events.SessionModelCleared{Session: "s1", Cause: "auto_recovered"}, false},
		{"/reset", events.SessionReset{Session: "s1", Kind: "reset"}, true},
		{"user pin", events.SessionAuthPinned{Session: "s1", ProfileID: "openai:key", Source: "user"}, true},
		{"auto pin", events.SessionAuthPinned{Session: "s1", ProfileID: "openai:key", Source: "auto"}, false},
		{"unpin", events.SessionAuthUnpinned{Session: "s1", ProfileID: "openai:key", Cause: "reset"}, false},
		{"notice state", events.FallbackNoticeStateChanged{Session: "s1"}, false},
		{"compaction", events.CompactionCompleted{Session: "s1", CompactionCount: 1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s SessionState
			NoteSeq(nil, &s, tc.p, 7, 6)
			if got := UserCommand(tc.p); got != tc.want || (s.UserCommandSeq == 7) != tc.want {
				t.Fatalf("UserCommand %v seq %d, want %v", got, s.UserCommandSeq, tc.want)
			}
		})
	}
	var st TurnState
	NoteSeq(&st, nil, events.TurnStarted{TurnID: "turn-1"}, 3, 2)
	NoteSeq(&st, nil, events.LiveSwitchMarked{TurnID: "turn-1", Model: m("google", "gemini")}, 5, 4)
	NoteSeq(&st, nil, events.AttemptStarted{TurnID: "turn-1"}, 6, 5)
	NoteSeq(&st, nil, events.FallbackStepped{TurnID: "turn-1", Decision: DecisionCandidateFailed}, 7, 6)
	if st.StartSeq != 3 || st.StartBasis != 2 || st.MarkSeq != 5 || st.SwitchSeenSeq != 0 {
		t.Fatalf("start %d basis %d mark %d switch seen %d, want 3, 2, 5 and 0", st.StartSeq, st.StartBasis, st.MarkSeq, st.SwitchSeenSeq)
	}
	NoteSeq(&st, nil, events.FallbackStepped{TurnID: "turn-1", Decision: DecisionLiveSwitch, FallbackStepFinalOutcome: StepContinue}, 8, 7)
	if st.SwitchSeenSeq != 8 || st.SwitchedBasis != 0 {
		t.Fatalf("switch seen %d, switched basis %d, want 8 and 0 (no jump)", st.SwitchSeenSeq, st.SwitchedBasis)
	}
	NoteSeq(&st, nil, events.FallbackStepped{TurnID: "turn-1", Decision: DecisionLiveSwitch, FallbackStepFinalOutcome: StepNextFallback}, 9, 8)
	if st.SwitchSeenSeq != 9 || st.SwitchedBasis != 8 {
		t.Fatalf("switch seen %d, switched basis %d, want 9 and 8", st.SwitchSeenSeq, st.SwitchedBasis)
	}
	// A commit stored without a basis is read as decided on the one
	// before it, as verify reads it.
	var bare TurnState
	NoteSeq(&bare, nil, events.TurnStarted{TurnID: "turn-2"}, 12, 0)
	if bare.StartBasis != 11 {
		t.Fatalf("start basis %d, want 11", bare.StartBasis)
	}
	// A user selection notes its sequence, and the profile its own
	// command pinned; an auto selection, or a pin of another command,
	// does not.
	var s SessionState
	for _, n := range []struct {
		p   events.Payload
		seq uint64
	}{
		{events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: "user"}, 10},
		{events.SessionAuthPinned{Session: "s1", ProfileID: "openai:work", Source: "user"}, 10},
		{events.SessionModelSelected{Session: "s1", Model: m("openai", "gpt-5"), Source: "auto"}, 11},
		{events.SessionAuthPinned{Session: "s1", ProfileID: "openai:home", Source: "user"}, 12},
	} {
		NoteSeq(nil, &s, n.p, n.seq, n.seq-1)
	}
	if s.SelectSeq != 10 || s.SelectProfile != "openai:work" {
		t.Fatalf("select seq %d profile %q, want 10 and openai:work", s.SelectSeq, s.SelectProfile)
	}
}
