package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// sessionView is what the cache keeps per session: the folded session
// state and the inputs the turn decider needs that come from turn events
// (policy.Env.SkipMarks, SelectRequest.LastAutoProbeAt).
type sessionView struct {
	state           policy.SessionState
	lastAutoProbeAt int64
	// skipMarks and profileSkipMarks are policy.Env.SkipMarks (rule
	// revision 1) and policy.Env.ProfileSkipMarks (revision 2).
	skipMarks        map[string]policy.SkipMark
	profileSkipMarks map[string]policy.SkipMark
	// activeAt is the session's last activity (Unix ms): the time of its
	// last event, or of the last event of one of its turns — what session
	// maintenance ages it by (prune.go).
	activeAt int64
	// ownAt is the time of the session's last session event (Unix ms):
	// what a turn's start measures the session's quiet by to choose its
	// guard (idleBeginGuard). It is no decision input and not in the
	// snapshot: 0 after a start from one, which only makes the next
	// starts guarded by the session's subject.
	ownAt int64
}

// state is one engine's in-process view of its agent's events: every
// aggregate folded by the policy's one dispatch into the shared
// policy.Evolve* functions (state implements policy.Folder), plus the last
// stream sequence of every subject (the guards of the next appends). It is
// fed in stream order, one whole commit at a time, by an ordered consumer
// on the whole stream (other agents' commits only move applied) and by the
// engine's own commits as soon as they are acknowledged (follow.go), so it
// is always the fold of a prefix of the stream: applied is the stream
// sequence of the last commit folded, and the basis a decision records.
// Readers hold mu for reading while they decide.
type state struct {
	agent string

	mu      sync.RWMutex
	changed *sync.Cond // signalled (under mu) after each applied commit
	applied uint64
	failed  error // a fatal consumer error; waiters return it

	subjectSeq map[string]uint64
	// turnLast is the stream sequence of the last commit holding an event
	// of each turn (kept after the turn ends): the step a decision on the
	// turn decides, named in its message id (stepMsgID).
	turnLast map[string]uint64
	// own holds commits this engine appended that are not folded yet
	// because a commit before them is not known yet (follow.go).
	own map[uint64]ownCommit
	// prefix is "fledger.<agent>." (encoded): the consumer reads the whole
	// stream and skips other agents' commits by it.
	prefix   string
	profiles map[string]policy.ProfileState
	sessions map[string]*sessionView
	turns    map[string]policy.TurnState
	// open counts each session's turns running or waiting, and
	// openTurns all of them (derived from turns: FoldTurn, restore).
	open      map[string]int
	openTurns int
	probeAt   map[string]int64
	// orders is the stored auth-profile order override by provider
	// (AuthOrderSet; policy.Env.StoredOrder).
	orders map[string][]string

	// configs holds every config seen, by hash; current is the hash of the
	// agent's last ConfigApplied.
	configs map[string]*policy.Config
	// configText is the text of each config in configs (the snapshot
	// stores it and parses it again).
	configText map[string]json.RawMessage
	current    string
	// decodeErrs counts stored messages that could not be decoded (they
	// are skipped; the events command names them).
	decodeErrs int

	// keep bounds the finished turns kept (WithFinishedTurns): finished
	// holds them in the order they finished, and once it is longer the
	// oldest is evicted from turns, turnLast and subjectSeq (evict).
	// evicted counts the turns evicted: while it is 0 every turn ever
	// started is in turns, so an unknown id needs no look-up in the store.
	keep     int
	finished []string
	evicted  uint64
	// pruned counts the sessions session maintenance dropped
	// (SessionPruned): their state and their subject's last sequence.
	// dropped counts them since the session maps were last shrunk
	// (dropSession; not part of the fold's meaning or its snapshot).
	pruned  uint64
	dropped uint64

	// afterApply, when set, is called by the follower (outside mu) after
	// each commit it folds: the engine's snapshot kick.
	afterApply func(applied uint64)
	// followIssue, when set, is the store's last error creating the
	// follower's consumer (events' FollowIssue): a fold that stands
	// still names it.
	followIssue func() error
	// lastMine is the sequence of the last commit of the agent's own this
	// process folded (0 = none; never part of a snapshot): Close saves a
	// snapshot only past it, so a command that only read (auth order get,
	// an engine on an agent with no events) stores nothing.
	lastMine uint64
}

func newState(agent string) *state {
	s := &state{
		agent:      agent,
		subjectSeq: map[string]uint64{},
		turnLast:   map[string]uint64{},
		own:        map[uint64]ownCommit{},
		prefix:     events.AgentPrefix(agent),
		profiles:   map[string]policy.ProfileState{},
		sessions:   map[string]*sessionView{},
		turns:      map[string]policy.TurnState{},
		open:       map[string]int{},
		probeAt:    map[string]int64{},
		orders:     map[string][]string{},
		configs:    map[string]*policy.Config{},
		configText: map[string]json.RawMessage{},
		keep:       DefaultFinishedTurns,
	}
	s.changed = sync.NewCond(s.mu.RLocker())
	return s
}

// apply folds one commit (all its events) stored at seq under subject,
// then any of the engine's own commits that directly follow it.
func (s *state) apply(seq uint64, subject string, evs []events.Event, derr error) {
	s.mu.Lock()
	s.applyLocked(seq, subject, evs, derr)
	s.mu.Unlock()
	s.changed.Broadcast()
}

func (s *state) applyLocked(seq uint64, subject string, evs []events.Event, derr error) {
	if seq <= s.applied {
		return
	}
	delete(s.own, seq)
	s.foldCommit(seq, subject, evs, derr)
	for {
		c, ok := s.own[s.applied+1]
		if !ok {
			break
		}
		delete(s.own, s.applied+1)
		s.foldCommit(s.applied+1, c.subject, c.evs, nil)
	}
}

// foldCommit folds one commit at seq and makes it the last applied.
func (s *state) foldCommit(seq uint64, subject string, evs []events.Event, derr error) {
	s.applied = seq
	if subject != "" && !strings.HasPrefix(subject, s.prefix) {
		return // another agent's commit: only the position moves
	}
	s.lastMine = seq
	s.subjectSeq[subject] = seq
	if derr != nil {
		s.decodeErrs++
	}
	for i := range evs {
		if evs[i].Aggregate == events.AggTurn && evs[i].Agent == s.agent {
			s.turnLast[evs[i].Key] = seq
		}
		s.fold(&evs[i])
		s.noteSeq(&evs[i], seq)
		s.noteActivity(&evs[i])
	}
	s.evict()
}

// evict drops the oldest finished turns beyond keep: their state, the
// sequence of their last commit and their subject's last sequence. A
// decision never reads a finished turn; the step API and BeginTurn look an
// evicted turn up in the store (lookupTurn). It runs in the fold, so every
// engine and every [Fold] of the same prefix evicts the same turns.
func (s *state) evict() {
	for len(s.finished) > s.keep {
		id := s.finished[0]
		s.finished = s.finished[1:]
		if t, ok := s.turns[id]; !ok || !finishedPhase(t.Phase) {
			continue // started again since (a writer that did not check)
		}
		delete(s.turns, id)
		delete(s.turnLast, id)
		if subj, err := events.Subject(s.agent, events.AggTurn, id); err == nil {
			delete(s.subjectSeq, subj)
		}
		s.evicted++
	}
	if cap(s.finished) > 2*s.keep+64 && len(s.finished) <= s.keep {
		s.finished = append(make([]string, 0, s.keep+1), s.finished...)
	}
}

// compactTurn is what is kept of a finished turn: its id, session,
// phase, attempt count and config hash (the fold, a snapshot's done
// turns and a turn looked up in the store keep the same).
func compactTurn(t policy.TurnState) policy.TurnState {
	return policy.TurnState{TurnID: t.TurnID, Session: t.Session, Phase: t.Phase, Attempts: t.Attempts, ConfigHash: t.ConfigHash}
}

// finishedPhase reports whether a turn in phase p has ended.
func finishedPhase(p policy.TurnPhase) bool {
	switch p {
	case policy.PhaseSucceeded, policy.PhaseExhausted, policy.PhaseStopped, policy.PhaseSwitched:
		return true
	}
	return false
}

// noteSeq notes stream sequences and bases on the states they concern
// (policy.NoteSeq): a turn's start, marks and live_switch records, a
// session's user commands and user selections. A rule-revision-3 turn
// writes no auto pin once a user command followed its start; a
// revision-5 turn derives a live switch from a user selection stored
// after its start was decided.
func (s *state) noteSeq(ev *events.Event, seq uint64) {
	if ev.Agent != s.agent {
		return
	}
	switch ev.Aggregate {
	case events.AggTurn:
		if t, ok := s.turns[ev.Key]; ok {
			policy.NoteSeq(&t, nil, ev.Data, seq, ev.Basis)
			s.turns[ev.Key] = t
		}
	case events.AggSession:
		if _, pruned := ev.Data.(events.SessionPruned); pruned {
			return // the session is gone (dropSession)
		}
		policy.NoteSeq(nil, &s.session(ev.Key).state, ev.Data, seq, ev.Basis)
	}
}

// fold applies one event with the policy's one dispatch
// ([policy.FoldEvent]): state is folded by the envelope's aggregate and
// key, never by the subject the commit was stored under (a commit stored
// under a profile subject carries turn and session events too). The
// inputs the decider takes from earlier turns are derived first, from
// the turn as it was before the event.
func (s *state) fold(ev *events.Event) {
	if ev.Agent != s.agent {
		return
	}
	if ev.Aggregate == events.AggTurn {
		s.turnInputs(ev)
	}
	policy.FoldEvent(s, ev)
}

// FoldProfile folds a profile event with policy.EvolveProfile.
func (s *state) FoldProfile(key string, p events.Payload) {
	s.profiles[key] = policy.EvolveProfile(s.profiles[key], p)
}

// FoldSession folds a session event with policy.EvolveSession; a
// SessionPruned drops the session (dropSession), unless a turn of the
// session is open: one begun while the prune was decided (a begin is not
// guarded by the session's subject) keeps its session, and the prune is
// void.
func (s *state) FoldSession(key string, p events.Payload) {
	if e, ok := p.(events.SessionPruned); ok {
		if e.Session == key && s.open[key] == 0 {
			s.dropSession(key)
		}
		return
	}
	v := s.session(key)
	v.state = policy.EvolveSession(v.state, p)
}

// FoldOrder folds an auth-order event with policy.EvolveOrders.
func (s *state) FoldOrder(key string, p events.Payload) { policy.EvolveOrders(s.orders, key, p) }

// FoldConfig folds a config event: see foldConfig.
func (s *state) FoldConfig(_ string, p events.Payload) { s.foldConfig(p) }

// foldConfig keeps every config that parses, by hash, and makes a
// ConfigApplied's config the current one. It reports false for a config
// type it does not know (TestState_FoldsEveryCatalogType).
func (s *state) foldConfig(p events.Payload) bool {
	c, ok := p.(events.ConfigApplied)
	if !ok {
		return false
	}
	if _, seen := s.configs[c.Hash]; !seen {
		s.parseConfig(c.Hash, c.Config)
	}
	if _, ok := s.configs[c.Hash]; ok {
		s.current = c.Hash
	}
	return true
}

func (s *state) session(key string) *sessionView {
	v := s.sessions[key]
	if v == nil {
		v = &sessionView{}
		s.sessions[key] = v
	}
	return v
}

// turnInputs derives, from a turn event and the turn before it, the
// cross-turn inputs the decider needs: the primary probe throttle
// (policy.Env.ProbeAt), the auth skip cache (policy.Env.SkipMarks) and
// the auto-override probe time (policy.SelectRequest.LastAutoProbeAt).
func (s *state) turnInputs(ev *events.Event) {
	switch e := ev.Data.(type) {
	case events.TurnStarted:
		if e.AutoOriginProbe {
			v := s.session(e.Session)
			v.lastAutoProbeAt = max(v.lastAutoProbeAt, e.StartedAt)
		}
	case events.AttemptStarted:
		if policy.AttemptKind(e.Kind) == policy.KindProbe && e.CandidateIndex == 0 {
			s.probeAt[e.Provider] = max(s.probeAt[e.Provider], e.StartedAt)
		}
	case events.AttemptFailed:
		if st := s.turns[ev.Key]; (e.Reason == policy.ReasonAuth || e.Reason == policy.ReasonAuthPermanent) && st.Current.CandidateIndex > 0 {
			s.markSkip(st.Session, e, ev)
		}
	}
}

// FoldTurn folds a turn event with policy.EvolveTurn. A finished turn is
// kept only as its id, session, phase, attempt count and config hash, and
// queued for eviction (evict); an event of a turn not started (or
// evicted) keeps nothing.
func (s *state) FoldTurn(key string, p events.Payload) {
	prev, known := s.turns[key]
	st := policy.EvolveTurn(prev, p)
	if !known && st.Phase == "" {
		return
	}
	if finishedPhase(st.Phase) {
		st = compactTurn(st)
		if !finishedPhase(prev.Phase) {
			s.finished = append(s.finished, key)
		}
	}
	s.turns[key] = st
	wasOpen, isOpen := known && prev.Phase.Open(), st.Phase.Open()
	if wasOpen && (!isOpen || prev.Session != st.Session) {
		s.countOpen(prev.Session, -1)
	}
	if isOpen && (!wasOpen || prev.Session != st.Session) {
		s.countOpen(st.Session, 1)
	}
}

// countOpen adds d to session's count of open turns.
func (s *state) countOpen(session string, d int) {
	s.openTurns += d
	if n := s.open[session] + d; n > 0 {
		s.open[session] = n
	} else {
		delete(s.open, session)
	}
}

// markSkip records an auth skip-cache marker for the failed candidate in
// the two forms the rule revisions read. Revision 1 reads it under every
// auth scope it may be looked up with (each configured profile of the
// provider, and none), so another profile inherited the failure; revision
// 2 under the profile that failed only (seed 000: "Switching profiles does
// not inherit another profile's failure marker"): the decider looks it up
// under the user pin or the first profile of the order, which the auth
// failure's cooldown moves behind the provider's other profiles.
func (s *state) markSkip(session string, e events.AttemptFailed, ev *events.Event) {
	v := s.session(session)
	if v.skipMarks == nil {
		v.skipMarks = map[string]policy.SkipMark{}
		v.profileSkipMarks = map[string]policy.SkipMark{}
	}
	mark := policy.SkipMark{At: events.Millis(ev.At), Reason: e.Reason}
	v.profileSkipMarks[policy.SkipKey(session, e.Provider, e.Model, e.ProfileID)] = mark
	v.skipMarks[policy.SkipKey(session, e.Provider, e.Model, "")] = mark
	if c := s.configs[s.current]; c != nil {
		for _, p := range c.ProviderProfiles(e.Provider) {
			v.skipMarks[policy.SkipKey(session, e.Provider, e.Model, p.ID)] = mark
		}
	}
}

// waitApplied blocks until the commit at seq (or a later one) is folded.
// foldBound bounds how long a step waits for the fold to reach a sequence
// before it answers the store unavailable: the store's own retry time, the
// time a stream leader election takes to be ridden out.
const foldBound = events.DefaultRetryUnknown

// waitFold is waitApplied bounded by foldBound: when the fold does not get
// to seq in that time (the stream's consumer cannot be served), it returns
// an *events.UnavailableError with outcome (what is known of the step's
// commit) instead of waiting for as long as ctx allows.
func (s *state) waitFold(ctx context.Context, seq uint64, outcome events.Outcome) error {
	wctx, cancel := context.WithTimeout(ctx, foldBound)
	defer cancel()
	err := s.waitApplied(wctx, seq)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		s.mu.RLock()
		at := s.applied
		s.mu.RUnlock()
		err = fmt.Errorf("the engine's fold stood at sequence %d, short of %d: %w", at, seq, err)
		if s.followIssue != nil {
			if fe := s.followIssue(); fe != nil {
				err = fmt.Errorf("%w; its stream consumer could not be created: %w", err, fe)
			}
		}
		return &events.UnavailableError{Op: "fold", Outcome: outcome, Attempts: 1, Waited: foldBound, Err: err}
	}
	return err
}

func (s *state) waitApplied(ctx context.Context, seq uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.applied >= seq {
		return s.failed
	}
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.mu.Unlock() //nolint:staticcheck // synchronise with a waiter between its check and Wait
		s.changed.Broadcast()
	})
	defer stop()
	for s.applied < seq && s.failed == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.changed.Wait()
	}
	return s.failed
}

// env builds the decider's Env for session at now. Call with mu held for
// reading; the maps are the cache's own and must not be retained past the
// read lock (the decider copies before it writes).
func (s *state) env(cfg *policy.Config, session string, now int64) policy.Env {
	env := policy.Env{Config: cfg, Profiles: s.profiles, StoredOrder: s.orders, ProbeAt: s.probeAt, Now: now}
	if v := s.sessions[session]; v != nil {
		env.Session, env.SkipMarks, env.ProfileSkipMarks = v.state, v.skipMarks, v.profileSkipMarks
	}
	return env
}

// running lists the session's turns that are running or waiting, sorted
// by id: the turns a user model selection may mark a live switch on
// (policy.MarkLiveSwitch). Call with mu held.
func (s *state) running(session string) []policy.TurnState {
	if s.open[session] == 0 {
		return nil
	}
	var out []policy.TurnState
	for _, t := range s.turns {
		if t.Session == session && (t.Phase == policy.PhaseRunning || t.Phase == policy.PhaseWaiting) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TurnID < out[j].TurnID })
	return out
}
