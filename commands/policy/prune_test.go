package policy_test

import (
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

func TestPruneStale(t *testing.T) {
	const now, age = int64(100_000), int64(30_000)
	for _, tc := range []struct {
		name     string
		session  string
		activeAt int64
		running  bool
		age      int64
		pruned   bool
	}{
		{"idle longer than the age", "s", 69_999, false, age, true},
		{"idle exactly the age: kept", "s", 70_000, false, age, false},
		{"active within the age", "s", 99_000, false, age, false},
		{"a running turn keeps it", "s", 1, true, age, false},
		{"no activity known: kept", "s", 0, false, age, false},
		{"no age: nothing", "s", 1, false, 0, false},
		{"negative age: nothing", "s", 1, false, -5, false},
		{"no session: nothing", "", 1, false, age, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := policy.PruneStale(tc.session, tc.activeAt, tc.running, now, tc.age)
			if !tc.pruned {
				if out != nil {
					t.Fatalf("got %+v, want nothing", out)
				}
				return
			}
			want := events.SessionPruned{Session: tc.session, Reason: "stale", LastActiveAt: tc.activeAt, PruneAfterMs: tc.age}
			if len(out) != 1 || out[0] != want {
				t.Fatalf("got %+v, want %+v", out, want)
			}
		})
	}
}

// A prune leaves nothing of the session; another session's leaves it.
func TestEvolveSession_Pruned(t *testing.T) {
	s := policy.SessionState{Session: "a", Pin: "openai:x", PinSource: policy.PinUser, CompactionCount: 2, UserCommandSeq: 9}
	if got := policy.EvolveSession(s, events.SessionPruned{Session: "b"}); got.Pin != "openai:x" {
		t.Fatalf("another session's prune changed it: %+v", got)
	}
	if got := policy.EvolveSession(s, events.SessionPruned{Session: "a"}); got.Session != "" || got.Pin != "" || got.CompactionCount != 0 || got.UserCommandSeq != 0 {
		t.Fatalf("after its prune: %+v, want nothing", got)
	}
}

// A World whose turn is open voids a prune of its session, as the
// engine's fold voids one while any turn of the session is open.
func TestWorld_PruneVoidWhileTurnOpen(t *testing.T) {
	s := policy.SessionState{Session: "a", Pin: "openai:x", PinSource: policy.PinUser}
	for _, tc := range []struct {
		phase policy.TurnPhase
		kept  bool
	}{
		{policy.PhaseRunning, true}, {policy.PhaseWaiting, true},
		{policy.PhaseSucceeded, false}, {"", false},
	} {
		w := policy.NewWorld(policy.TurnState{TurnID: "t", Session: "a", Phase: tc.phase}, policy.Env{Session: s})
		w.Fold(events.SessionPruned{Session: "a", Reason: policy.PruneReasonStale, LastActiveAt: 1, PruneAfterMs: 1})
		if got := w.Session().Pin == "openai:x"; got != tc.kept {
			t.Errorf("turn %q: session kept %v, want %v", tc.phase, got, tc.kept)
		}
	}
}
