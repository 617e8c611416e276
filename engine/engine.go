package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Engine runs failover turns for one agent on an event store: it loads
// state, asks the pure deciders of commands/policy what to do, appends each
// decision as one atomic commit guarded by the subject whose consistency it
// protects, performs the provider calls through a [Caller], and classifies
// their errors. Its state is an in-process fold of the agent's events
// (fledger.<agent>.>) kept current by an ordered consumer; after each
// append it waits until that fold has applied the new commit, so a
// decision never uses state older than what this engine appended.
//
// Several engines (in one process or many) may share a stream: a conflict
// on a guarded subject makes the loser reload and decide again, at most
// [DefaultConflictRetries] times. An Engine is safe for concurrent use.
type Engine struct {
	store events.Store
	agent string
	opt   options
	st    *state
	// panics holds when a decision of each aggregate key last panicked
	// with its stack logged (decideSafely).
	panics sync.Map

	closeOnce sync.Once
	stop      func()
	fol       *follower // the stream consumer and its watchdog

	plocks profileLocks
	blocks beginLocks // begins of one turn id, one at a time (begin_lock.go)
	// lookups reads back, keeps and bounds turns not in memory
	// (turn_lookup.go).
	lookups *turnLookups

	// snaps takes snapshots (snapshot_run.go; nil = none); snapSeq is the
	// sequence of the last snapshot started from or saved, snapshots the
	// number saved.
	snaps     *snapshotter
	snapSeq   atomic.Uint64
	snapshots atomic.Uint64
	// retryAt is the sequence before which no snapshot is tried after a
	// failed save (snapshot_run.go).
	retryAt atomic.Uint64
	// startedFrom is the sequence of the snapshot New started from.
	startedFrom uint64
	// rootRemoved is set once a save found that the snapshot this engine
	// started from was removed (snapshot_run.go): its state is not saved
	// again.
	rootRemoved atomic.Bool
	ready       atomic.Bool

	commits, conflicts atomic.Uint64
	// skipSince is when this engine's auth skip cache began (Unix ms; 0 =
	// it started on an empty stream): TurnStarted.SkipCacheSince.
	skipSince int64
	// beforeAppend, when set (tests only), runs between a decision and its
	// append.
	beforeAppend func(subject string)
	// afterSelect, when set (tests only), runs between a begin's
	// selection (selectForTurn) and the decision of its start.
	afterSelect func(turnID string)
	// beforeSelect, when set (tests only), runs when a begin is about to
	// record its selection, after its sync and look-up.
	beforeSelect func(turnID string)
	// observe, when set (benchmarks only), gets each commit's duration:
	// decide, append, and wait for the state to fold it.
	observe func(time.Duration)
}

// Stats counts an engine's appends.
type Stats struct {
	// Commits is the number of decisions appended; Conflicts the number of
	// appends refused because another writer appended to the guarded
	// subject first (each was reloaded and decided again).
	Commits, Conflicts uint64
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Commits: e.commits.Load(), Conflicts: e.conflicts.Load()}
}

// New starts an engine for agent on store and waits until its state has
// caught up with the agent's events already on the stream. Close it when
// done (the store stays open).
func New(ctx context.Context, store events.Store, agent string, opts ...Option) (*Engine, error) {
	if _, err := events.AggregateFilter(agent, events.AggTurn); err != nil {
		return nil, fmt.Errorf("%w: agent: %v", ErrBadRequest, err)
	}
	o := defaultOptions()
	for _, f := range opts {
		if err := f(&o); err != nil {
			return nil, err
		}
	}
	e := &Engine{store: store, agent: agent, opt: o, lookups: newTurnLookups(lookupCacheTurns, maxStreamLookups)}
	e.st = e.startState(ctx)
	if fi, ok := store.(interface{ FollowIssue() error }); ok {
		e.st.followIssue = fi.FollowIssue
	}
	e.startSnapshots()
	e.fol = e.st.follow(store)
	e.stop = e.fol.stop
	if err := e.catchUp(ctx); err != nil {
		e.Close()
		return nil, err
	}
	e.ready.Store(true)
	// The auth skip cache is process-local (seed 000: it "clears on
	// Gateway restart"): an engine started on a stream that already held
	// commits reads no mark set before now, and records when its cache
	// began in every turn it starts (TurnStarted.SkipCacheSince), so
	// replay decides those turns the same.
	if e.Position() > 0 {
		e.skipSince = events.Millis(e.opt.clock.Now())
	}
	return e, nil
}

// Agent is the agent id the engine writes and reads.
func (e *Engine) Agent() string { return e.agent }

// Close stops following the stream and saves a last snapshot of the
// state when it moved since the last one. It does not close the store.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.stop != nil {
			e.stop()
		}
		e.stopSnapshots(e.ready.Load())
		e.st.fail(ErrClosed)
	})
}

// Sync waits until the engine's state includes every event of its agent
// stored when Sync was called, including other engines' appends. Decisions
// do not need it (conflicts bring in what they miss); queries after
// another process wrote do.
//
// It asks for the stream's last sequence (one cheap request, whatever the
// number of subjects) and waits until the fold has reached it.
func (e *Engine) Sync(ctx context.Context) error {
	last, err := e.store.LastSeq(ctx, "")
	if err != nil {
		return err
	}
	return e.st.waitFold(ctx, last, events.NotStored)
}

// catchUp is Sync for New: the first fold of a long stream (from
// sequence 1, or from an old snapshot) may take longer than the bound of
// one wait (foldBound), so the wait is renewed as long as the fold moved
// during it; a fold that stands still for foldBound fails as Sync does.
func (e *Engine) catchUp(ctx context.Context) error {
	last, err := e.store.LastSeq(ctx, "")
	if err != nil {
		return err
	}
	for {
		before := e.Position()
		err := e.st.waitFold(ctx, last, events.NotStored)
		var ue *events.UnavailableError
		if errors.As(err, &ue) && e.Position() > before {
			continue
		}
		return err
	}
}

// SyncTo waits until the engine's state includes every commit up to stream
// sequence seq (another engine's [Engine.Position], say).
func (e *Engine) SyncTo(ctx context.Context, seq uint64) error { return e.st.waitApplied(ctx, seq) }

// Position is the stream sequence the engine's state is folded to: the
// basis the next decision would record.
func (e *Engine) Position() uint64 {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	return e.st.applied
}

// Profile returns the usageStats of profile id as folded so far.
func (e *Engine) Profile(id string) policy.ProfileState {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	return e.st.profiles[id]
}

// Profiles returns the ids of every profile with recorded state, sorted.
func (e *Engine) Profiles() []string {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	out := make([]string, 0, len(e.st.profiles))
	for id := range e.st.profiles {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Session returns a session's state as folded so far.
func (e *Engine) Session(key string) policy.SessionState {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	if v := e.st.sessions[key]; v != nil {
		return v.state
	}
	return policy.SessionState{}
}

// Turn returns a turn's state (a finished turn keeps only its id, session,
// phase and attempt count) and whether it is in memory: a finished turn
// older than the last [WithFinishedTurns] is not ([Engine.LookupTurn]
// reads it back).
func (e *Engine) Turn(id string) (policy.TurnState, bool) {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	t, ok := e.st.turns[id]
	return t, ok
}

// Unfinished lists, sorted, the turns of session ("" = every session) that
// have a TurnStarted but no TurnSucceeded, TurnExhausted, TurnStopped or
// TurnSwitched:
// turns whose engine stopped (crash, cancellation) between two decisions.
// They are never reported as succeeded.
func (e *Engine) Unfinished(session string) []string {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	var out []string
	for id, t := range e.st.turns {
		if (session == "" || t.Session == session) && (t.Phase == policy.PhaseRunning || t.Phase == policy.PhaseWaiting) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Config returns the config in force (the agent's last ConfigApplied).
func (e *Engine) Config() (*policy.Config, bool) {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	c := e.st.configs[e.st.current]
	return c, c != nil
}

// LookupTurn is [Engine.Turn] for a turn that may have been evicted: a
// finished turn older than the last [WithFinishedTurns] is no longer in
// memory, and is then read back from the stream (its subject, then its
// commits from its start to its end) and returned as the fold keeps a
// finished turn. A turn the engine has in memory, or any id while the
// engine has evicted none, costs no request; a finished turn once read
// back is kept (the last 1,024 looked up), concurrent lookups of one id
// share one read, and at most 4 such reads run at once.
func (e *Engine) LookupTurn(ctx context.Context, id string) (policy.TurnState, bool, error) {
	e.st.mu.RLock()
	t, ok := e.st.turns[id]
	evicted := e.st.evicted
	e.st.mu.RUnlock()
	if (ok && t.Phase != "") || evicted == 0 {
		return t, ok && t.Phase != "", nil
	}
	sum, err := e.lookups.get(ctx, id, e.readTurn)
	if err != nil || sum == nil {
		return policy.TurnState{}, false, err
	}
	return sum.state, sum.state.Phase != "", nil
}
