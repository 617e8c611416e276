package bench

import (
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// stateAgent is the agent of the state-size folds.
const stateAgent = "gw-state"

// stateSize is what an engine's state holds per session, or per open
// turn, measured on a real fold (engine.Fold, the engine's own state
// code): the live heap of the fold and its snapshot state's encoded size,
// each minus those of a fold of the config alone, divided by N.
type stateSize struct {
	// N is the sessions (each given one turn of the generator mix) or the
	// open turns (started and never finished, on 16 sessions) folded.
	N    int
	Open bool
	// HeapPer and SnapshotPer are bytes per session or open turn.
	HeapPer, SnapshotPer float64
	Held                 engine.Held
	// Commits is the commits folded; the rest count what the N sessions
	// held (sessions mode only).
	Commits                                  int
	AutoPins, Notices, UserModels, SkipMarks int
}

// foldedState is a fold and the generator's counts, the generator gone.
type foldedState struct {
	f        *engine.Fold
	commits  int
	sessions int
}

// foldState generates, with the bench's generator (gen.go: the policy
// deciders on virtual time, 3 profiles per provider), either n sessions
// with one turn each (its session commands included: the mix sends one
// every 97 turns or so) or n turns abandoned after their first commit,
// and folds every commit as the engine's follower does: decoded by the
// catalog registry (DecodeCommit, the copying decode the engine's fold
// uses) and applied in stream order to an engine.Fold keeping one
// finished turn (a session's cost, not the finished turns' bound).
func foldState(n int, open bool) (foldedState, error) {
	l, err := loadConfig(3)
	if err != nil {
		return foldedState{}, err
	}
	reg := events.NewCatalogRegistry()
	f := engine.NewFoldKeeping(stateAgent, 1)
	var seq uint64
	g, err := newGenerator(reg, l, stateAgent, 7, func(subject, _ string, body []byte) error {
		seq++
		evs, err := reg.DecodeCommit(body, seq, subject)
		if err != nil {
			return err
		}
		f.Apply(seq, subject, evs)
		return nil
	})
	if err != nil {
		return foldedState{}, err
	}
	next := g.abandon
	if !open {
		g.nSessions = max(n, 1)
		next = g.step
	}
	for range n {
		if err := next(); err != nil {
			return foldedState{}, err
		}
	}
	return foldedState{f: f, commits: g.Commits, sessions: g.nSessions}, nil
}

// measureFold folds n sessions (or open turns) and returns the live heap
// the fold holds (after a GC with it kept, minus after it is dropped),
// its snapshot state's encoded size in SnapshotPer and, in r, what it
// held.
func measureFold(n int, open bool) (r stateSize, heap int64, err error) {
	r = stateSize{N: n, Open: open}
	fs, err := foldState(n, open)
	if err != nil {
		return r, 0, err
	}
	with := heapLive()
	b, err := fs.f.StateEncoding()
	if err != nil {
		return r, 0, err
	}
	r.SnapshotPer = float64(len(b))
	r.Held, r.Commits = fs.f.Held(), fs.commits
	if !open {
		r.count(fs)
	}
	fs.f = nil // the fold is garbage now: what it held is the difference
	return r, int64(with) - int64(heapLive()), nil
}

// count counts what the fold's sessions hold.
func (r *stateSize) count(fs foldedState) {
	cfg := fs.f.Current()
	for i := range fs.sessions {
		key := fmt.Sprintf("agent:%s:telegram:direct:%d", stateAgent, i)
		s := fs.f.Session(key)
		if s.PinSource == policy.PinAuto {
			r.AutoPins++
		}
		if s.Notice.Active != "" {
			r.Notices++
		}
		if s.Source == policy.SourceUser {
			r.UserModels++
		}
		if env := fs.f.Env(cfg, key, 0); len(env.SkipMarks)+len(env.ProfileSkipMarks) > 0 {
			r.SkipMarks++
		}
	}
}

// measureStateSize folds n sessions (or n open turns) and a config alone,
// and returns the difference per session (or open turn).
func measureStateSize(n int, open bool) (stateSize, error) {
	base, baseHeap, err := measureFold(0, open)
	if err != nil {
		return base, err
	}
	r, heap, err := measureFold(n, open)
	if err != nil {
		return r, err
	}
	r.HeapPer = float64(heap-baseHeap) / float64(n)
	r.SnapshotPer = (r.SnapshotPer - base.SnapshotPer) / float64(n)
	return r, nil
}

// stateRows measures the engine state per session and per open turn at
// the run's two sizes (sizes.stateN), each a row of heap bytes, and the
// snapshot's bytes at the larger size.
func (b *runner) stateRows() error {
	settleHeap() // what the phases before let go of in the background
	for _, open := range []bool{false, true} {
		what := "session"
		if open {
			what = "open turn"
		}
		var last stateSize
		for _, n := range b.sz.stateN {
			b.progress("engine state per %s, %d folded", what, n)
			r, err := measureStateSize(n, open)
			if err != nil {
				return fmt.Errorf("engine state per %s, %d: %w", what, n, err)
			}
			last = r
			name := fmt.Sprintf("engine state heap per %s, %s %ss", what, count(n), what)
			if r.HeapPer <= 0 {
				b.rep.Notes = append(b.rep.Notes, name+": below the GC's noise")
				continue
			}
			b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: name, Value: r.HeapPer, Unit: "B", Detail: r.detail()}, nil, "", true))
		}
		if last.N > 0 {
			b.rep.Rows = append(b.rep.Rows, barRow(Measure{Name: fmt.Sprintf("engine snapshot bytes per %s, %s %ss", what, count(last.N), what),
				Value: last.SnapshotPer, Unit: "B", Detail: "the snapshot state's canonical JSON (Fold.StateEncoding), minus a fold of the config alone"}, nil, "", true))
		}
	}
	return nil
}

// detail names what the fold held.
func (r stateSize) detail() string {
	h := r.Held
	held := fmt.Sprintf("state held %d sessions, %d open turns, %d finished turn(s) kept, %d subject sequences; snapshot %.0f B per unit",
		h.Sessions, h.OpenTurns, h.FinishedTurns, h.Subjects, r.SnapshotPer)
	if r.Open {
		return fmt.Sprintf("%d turns started on 16 sessions, never finished (TurnStarted + AttemptStarted, %d commits); %s", r.N, r.Commits, held)
	}
	return fmt.Sprintf("%d sessions, one generator-mix turn each (%d commits): %d with an auto pin, %d a fallback notice, "+
		"%d a user model override, %d auth skip marks; %s", r.N, r.Commits, r.AutoPins, r.Notices, r.UserModels, r.SkipMarks, held)
}
