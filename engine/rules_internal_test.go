package engine

import (
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The engine folds a non-primary auth failure into the skip cache in both
// forms the rule revisions read: revision 1's under every profile of the
// provider (here, with no config folded, only "") and revision 2's under
// the profile that failed only.
func TestState_SkipMarksKeptForEachRevision(t *testing.T) {
	at := time.Date(2026, 3, 5, 11, 0, 0, 0, time.UTC)
	s := newState("main")
	for _, p := range []events.Payload{
		events.TurnStarted{TurnID: "t1", Session: "s1", Chat: "direct", Chain: []events.Candidate{
			{Provider: "anthropic", Model: "claude"}, {Provider: "openai", Model: "gpt-5"}}, Rules: 2},
		events.AttemptStarted{TurnID: "t1", Attempt: 1, CandidateIndex: 1, Provider: "openai", Model: "gpt-5", ProfileID: "openai:sub", Kind: "fallback"},
		events.AttemptFailed{TurnID: "t1", Attempt: 1, Provider: "openai", Model: "gpt-5", ProfileID: "openai:sub", Reason: "auth", Disposition: "failover"},
	} {
		ev := events.New("main", events.KeyOf(p), at, p)
		s.fold(&ev)
	}
	v := s.sessions["s1"]
	want := policy.SkipMark{At: at.UnixMilli(), Reason: "auth"}
	if v == nil || len(v.profileSkipMarks) != 1 || v.profileSkipMarks[policy.SkipKey("s1", "openai", "gpt-5", "openai:sub")] != want {
		t.Fatalf("revision 2 marks %+v", v)
	}
	if len(v.skipMarks) != 1 || v.skipMarks[policy.SkipKey("s1", "openai", "gpt-5", "")] != want {
		t.Fatalf("revision 1 marks %+v", v.skipMarks)
	}
}
