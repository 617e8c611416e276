package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Fold is one agent's state folded from its events exactly as an [Engine]
// folds it (the same code): usageStats, sessions, turns, the probe
// throttle, the auth skip cache, the auto-override probe times and every
// config seen. Replay uses it to rebuild, at any stream position, the very
// inputs a decision was taken on. Feed it whole commits in stream order
// with [Fold.Apply]. A Fold is not safe for concurrent use.
type Fold struct{ st *state }

// NewFold returns an empty fold for agent. It keeps
// [DefaultFinishedTurns] finished turns, as an engine does by default.
func NewFold(agent string) *Fold { return NewFoldKeeping(agent, DefaultFinishedTurns) }

// NewFoldKeeping returns an empty fold for agent keeping keep finished
// turns, as an engine started [WithFinishedTurns](keep) does (a keep
// below 0 keeps none, as 0 does).
func NewFoldKeeping(agent string, keep int) *Fold {
	s := newState(agent)
	s.keep = max(keep, 0)
	return &Fold{st: s}
}

// Held counts what a fold (an engine's state) holds, the figures its
// memory grows with: sessions until session maintenance prunes them
// ([Engine.PruneSessions]), open turns until they finish, finished turns
// up to the bound kept ([WithFinishedTurns]), and the last sequence of
// every subject a commit of the agent was stored under, except evicted
// turns' and pruned sessions' subjects.
type Held struct {
	Sessions, OpenTurns, FinishedTurns, Subjects int
	// Pruned is how many sessions the fold has dropped for session
	// maintenance (SessionPruned, appended by any writer).
	Pruned uint64
}

// Held counts what the fold holds.
func (f *Fold) Held() Held { return f.st.held() }

// Held counts what the engine's state holds now (serve exports it as
// gauges: docs/exporters.md); counts kept by the fold, O(1) under the
// state's read lock.
func (e *Engine) Held() Held {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	return e.st.held()
}

// held counts what s holds. Call with mu held (or on a fold of one
// goroutine).
func (s *state) held() Held {
	return Held{Sessions: len(s.sessions), Subjects: len(s.subjectSeq), Pruned: s.pruned,
		OpenTurns: s.openTurns, FinishedTurns: len(s.turns) - s.openTurns}
}

// Apply folds one commit (all its events, stored at seq under subject; ""
// when unknown). Commits at or below the last applied sequence are ignored.
func (f *Fold) Apply(seq uint64, subject string, evs []events.Event) {
	f.st.apply(seq, subject, evs, nil)
}

// SessionActivity is what session maintenance reads of a session: its
// last activity (Unix ms; 0 = none known) and whether one of its turns is
// running or waiting.
func (f *Fold) SessionActivity(session string) (activeAt int64, running bool) {
	if v := f.st.sessions[session]; v != nil {
		activeAt = v.activeAt
	}
	return activeAt, f.st.hasOpenTurn(session)
}

// Applied is the stream sequence of the last commit folded.
func (f *Fold) Applied() uint64 { return f.st.applied }

// Env builds the decider's Env for session at now (Unix ms) under cfg,
// exactly as the engine does before a decision. The maps are the fold's
// own: do not modify them (the deciders never do).
func (f *Fold) Env(cfg *policy.Config, session string, now int64) policy.Env {
	return f.st.env(cfg, session, now)
}

// Current returns the config in force (the agent's last ConfigApplied that
// parsed) and its hash; nil when none.
func (f *Fold) Current() *policy.Config { return f.st.configs[f.st.current] }

// Config returns a config seen on the stream by hash (nil when unknown).
func (f *Fold) Config(hash string) *policy.Config { return f.st.configs[hash] }

// Turn returns a turn's folded state (a finished turn keeps only its id,
// session, phase and attempt count) and whether it is known.
func (f *Fold) Turn(id string) (policy.TurnState, bool) {
	t, ok := f.st.turns[id]
	return t, ok
}

// Running lists the session's running or waiting turns, sorted by id: the
// turns the engine offers policy.MarkLiveSwitch for a model selection.
func (f *Fold) Running(session string) []policy.TurnState { return f.st.running(session) }

// Session returns a session's folded state.
func (f *Fold) Session(key string) policy.SessionState {
	if v := f.st.sessions[key]; v != nil {
		return v.state
	}
	return policy.SessionState{}
}

// LastAutoProbeAt is the start (Unix ms) of the session's last turn that
// probed a stored auto override's origin (0 = never): the
// SelectRequest.LastAutoProbeAt the engine passes.
func (f *Fold) LastAutoProbeAt(session string) int64 {
	if v := f.st.sessions[session]; v != nil {
		return v.lastAutoProbeAt
	}
	return 0
}

// Profiles returns a copy of every profile's usageStats.
func (f *Fold) Profiles() map[string]policy.ProfileState {
	out := make(map[string]policy.ProfileState, len(f.st.profiles))
	for k, v := range f.st.profiles {
		out[k] = v
	}
	return out
}

// ProfileIDs lists the profiles with recorded state, sorted.
func (f *Fold) ProfileIDs() []string {
	out := make([]string, 0, len(f.st.profiles))
	for id := range f.st.profiles {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// StoredOrder returns the stored auth-profile order of provider (nil when
// none): the policy.Env.StoredOrder entry the engine passes.
func (f *Fold) StoredOrder(provider string) []string {
	return append([]string(nil), f.st.orders[provider]...)
}

// FoldTo folds agent's commits of st from sequence 1 to seq exactly as an
// engine's follower does (the same consumer, subjects and undecodable
// messages included), keeping keep finished turns: the state a snapshot
// taken at seq must equal. It fails when the stream ends before seq.
func FoldTo(ctx context.Context, st events.Store, agent string, keep int, seq uint64) (*Fold, error) {
	s := newState(agent)
	s.keep = keep
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return nil, err
	}
	if last < seq {
		return nil, fmt.Errorf("engine: the stream ends at sequence %d, before %d", last, seq)
	}
	if seq == 0 {
		return &Fold{st: s}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for c, err := range st.Follow(ctx, events.FollowOptions{From: 1, Decode: s.mine}) {
		if err != nil {
			return nil, fmt.Errorf("engine: fold %s to %d: %w", agent, seq, err)
		}
		if c.Seq > seq {
			break
		}
		s.applyFollowed(c)
		if c.Seq >= seq || (c.Err != nil && c.Err.Gap() && c.Err.Through >= seq) {
			break
		}
	}
	return &Fold{st: s}, nil
}
