package bench

import (
	"testing"

	"github.com/fledger/fledger/engine"
)

// TestFoldState_Holds: the state-size folds hold what their rows say —
// n sessions and no open turn, or n open turns and no session — with the
// generator's seeded mix giving the same commits every run.
func TestFoldState_Holds(t *testing.T) {
	for _, c := range []struct {
		open    bool
		n       int
		held    engine.Held
		commits int
	}{
		// The config's subject, the profiles' and the sessions' a turn
		// decision or a session command was stored under (as an engine
		// stores them: engine.TurnDecisionSubject).
		{false, 300, engine.Held{Sessions: 300, OpenTurns: 0, FinishedTurns: 1, Subjects: 297}, 783},
		// A subject per open turn, and the config's; a turn's start
		// writes nothing on its session, which is held for its last
		// activity (the generator's 16 sessions).
		{true, 300, engine.Held{Sessions: 16, OpenTurns: 300, FinishedTurns: 0, Subjects: 301}, 301},
	} {
		fs, err := foldState(c.n, c.open)
		if err != nil {
			t.Fatal(err)
		}
		if got := fs.f.Held(); got != c.held || fs.commits != c.commits {
			t.Errorf("open %v, n %d: held %+v in %d commits, want %+v in %d", c.open, c.n, got, fs.commits, c.held, c.commits)
		}
	}
}
