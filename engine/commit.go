package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// home is the aggregate a decision is stored under when it touches no
// profile's failure state: the turn (turn decisions) or the session
// (session commands).
type home struct {
	agg events.Aggregate
	key string
	// msgID, when set, is the message id of the home's commit unless it
	// marks a live switch (a begin's selection: beginSelectionMsgID), and
	// a commit of another writer under it is not decided again (retake).
	msgID string
}

// ErrStepTaken: the turn step a [Engine.RunTurn] decision was for had
// already been decided by another writer (another engine or client
// reporting on the same turn); nothing was appended by this one and the
// turn is left to that writer.
//
// A decide function returns it when the turn is no longer at the step it
// was called for; commit returns it when the store says the step's message
// id was taken by another commit.
var ErrStepTaken = errors.New("engine: the turn's step was decided by another writer")

// stepTakenError is ErrStepTaken with the stream sequence of the commit
// that holds the message id.
type stepTakenError struct{ seq uint64 }

func (e *stepTakenError) Error() string        { return ErrStepTaken.Error() }
func (e *stepTakenError) Is(target error) bool { return target == ErrStepTaken }

// commit decides and appends one decision atomically. decide runs with
// the state's read lock held, so the state it sees, the guard sequence
// and the basis it records are one consistent snapshot (the fold of the
// stream up to the basis); it must not block or keep references to the
// maps it is given.
//
// Where it goes (docs/engine.md "Subjects and consistency"): a decision
// that changes a profile's failure state (ProfileFailureRecorded,
// ProfileSucceeded, ProfileCleared for P; at most one profile) is stored
// under fledger.<agent>.profile.<P>, guarded by that subject's last
// sequence, so two engines failing the same profile conflict and the loser
// re-decides on the winner's counts; any other decision — including a
// success that only records usage (ProfileUsed), which commutes with
// everything else on the profile — is stored under its home subject (the
// turn or the session), guarded the same way. A turn decision's message id
// names the step it decides (stepMsgID), so two writers deciding the same
// step of a turn, whatever subjects they store under, are stored once: the
// loser gets ErrStepTaken.
//
// On a conflict commit waits until the state has folded the winning commit
// and decides again, at most e.opt.retries times. An empty decision
// appends nothing (seq 0). The commit is folded into the state as soon as
// it is acknowledged when nothing unknown lies before it (applyOwn).
func (e *Engine) commit(ctx context.Context, at time.Time, h home, corr string,
	decide func() (policy.Decision, error)) (policy.Decision, []events.Event, error) {
	var last error
	var (
		floor      uint64
		floorGuard string
	)
	subject := ""
	start := time.Now()
	if e.observe != nil {
		defer func() { e.observe(time.Since(start)) }()
	}
	for try := 0; try <= e.opt.retries; try++ {
		dec, req, ok, err := e.decideLocked(h, decide, floor, floorGuard)
		if !ok {
			return dec, nil, err
		}
		subject = req.Subject
		req.Events = e.commitEvents(at, corr, dec.Events)
		if e.beforeAppend != nil {
			e.beforeAppend(subject)
		}
		res, err := e.store.AppendCommit(ctx, req)
		var ce *events.ConflictError
		if errors.As(err, &ce) {
			e.conflicts.Add(1)
			last = err
			target, err := e.awaitWinner(ctx, ce)
			if err != nil {
				return dec, nil, err
			}
			floor, floorGuard = target, ce.Guard
			continue
		}
		if err != nil {
			if isValidationError(err) {
				// Refused before anything was stored: the step can be
				// taken again once fixed; nothing is half-recorded.
				return dec, nil, fmt.Errorf("%w: %w", ErrInvalidDecision, err)
			}
			return dec, nil, err
		}
		dec, evs, err := e.settle(ctx, start, dec, req, res)
		if errors.Is(err, ErrStepTaken) && e.retake(h, req.MsgID) {
			// The step went to a live-switch mark (or, for a session
			// command, to the turn's decision): decide again on it.
			last = err
			continue
		}
		return dec, evs, err
	}
	return policy.Decision{}, nil, &ConflictRetriesError{Subject: subject, Tries: e.opt.retries + 1, Last: last}
}

// decideLocked is one try's decision, taken on one consistent snapshot:
// with the state's read lock held it runs decide and builds the append
// request for its events (route) with the basis the decision saw and,
// for a turn decision, the step's message id. ok is false when there is
// nothing to append: the state has failed, decide returned an error or
// an empty decision, or the decision cannot be routed; commit then returns
// dec and err as they are.
//
// floor and floorGuard are the previous try's conflict, if any: after a
// conflict the fold holds everything up to the guard's last sequence as
// the server saw it, so the request expects at least that, and a message
// the fold does not attribute to the guard (a stray subject a wildcard
// guard matches) cannot make it conflict forever.
func (e *Engine) decideLocked(h home, decide func() (policy.Decision, error), floor uint64, floorGuard string) (dec policy.Decision, req events.AppendRequest, ok bool, err error) {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	if e.st.failed != nil {
		return policy.Decision{}, events.AppendRequest{}, false, e.st.failed
	}
	dec, err = e.decideSafely(h, decide)
	if err != nil || len(dec.Events) == 0 {
		return dec, events.AppendRequest{}, false, err
	}
	req, err = e.route(h, dec.Events)
	if err != nil {
		return dec, events.AppendRequest{}, false, err
	}
	if req.Guard == floorGuard {
		req.Expected = max(req.Expected, floor)
	}
	req.Basis = e.st.applied
	if h.agg == events.AggTurn {
		req.MsgID = stepMsgID(e.agent, h.key, e.st.turnLast[h.key])
	} else if t := markedTurn(dec.Events); t != "" {
		// A session command that marks a live switch takes the marked
		// turn's next step: the turn's pending decision and the mark
		// cannot both be stored on one basis, so the turn's decision
		// either saw the mark or is decided again on it.
		req.MsgID = stepMsgID(e.agent, t, e.st.turnLast[t])
	} else if h.msgID != "" {
		req.MsgID = h.msgID
	}
	return dec, req, true, nil
}

// ErrDecisionPanicked: a decider panicked on the state it was given (a
// commit no engine writes — forged, or a bug — made a turn's state
// impossible). Nothing was appended; the step's request fails, and the
// engine goes on serving every other turn and session.
var ErrDecisionPanicked = errors.New("engine: the decision panicked; nothing was appended")

// decideSafely runs decide, turning a panic into an error wrapping
// ErrDecisionPanicked, logged with its stack (once per aggregate key per
// panicStackEvery; a client re-sending the step gets a short line): the
// state's read lock the caller holds is released by its defer either
// way, where a panic used to leave it held and wedge every later step and
// the fold behind it.
func (e *Engine) decideSafely(h home, decide func() (policy.Decision, error)) (dec policy.Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			attrs := []any{"agent", e.agent, "aggregate", string(h.agg), "key", h.key, "panic", fmt.Sprint(r)}
			id, now := string(h.agg)+"/"+h.key, time.Now()
			if last, ok := e.panics.Load(id); !ok || now.Sub(last.(time.Time)) >= panicStackEvery {
				e.panics.Store(id, now)
				attrs = append(attrs, "stack", string(debug.Stack()))
			}
			e.opt.logger.Error("engine: a decision panicked (its turn's state is impossible: replay --verify names a forged or re-sent commit)", attrs...)
			dec, err = policy.Decision{}, fmt.Errorf("%w: %s %q: %v", ErrDecisionPanicked, h.agg, h.key, r)
		}
	}()
	return decide()
}

// panicStackEvery spaces the stacks decideSafely logs for one key.
const panicStackEvery = 10 * time.Minute

// commitEvents wraps a decision's payloads as the commit's events, all at
// at: each carries the correlation id corr when there is one, and every
// event after the first names the first as its cause.
func (e *Engine) commitEvents(at time.Time, corr string, ps []events.Payload) []events.Event {
	evs := make([]events.Event, len(ps))
	for i, p := range ps {
		opts := []events.EventOpt{}
		if corr != "" {
			opts = append(opts, events.WithCorrelation(corr))
		}
		if i > 0 {
			opts = append(opts, events.WithCausation(evs[0].ID))
		}
		evs[i] = events.New(e.agent, events.KeyOf(p), at, p, opts...)
	}
	return evs
}

// awaitWinner waits, after the conflict ce, until the state has folded
// the commit that won it: up to the guard's actual last sequence, asked
// of the store when the conflict did not name it. It returns that
// sequence, the floor of the next try's expectation.
func (e *Engine) awaitWinner(ctx context.Context, ce *events.ConflictError) (uint64, error) {
	target := ce.Actual
	if !ce.ActualKnown {
		var err error
		if target, err = e.store.LastSeq(ctx, ce.Guard); err != nil {
			return 0, err
		}
	}
	if err := e.st.waitFold(ctx, target, events.NotStored); err != nil {
		return 0, err
	}
	return target, nil
}

// settle answers a stored commit res of req (the decision dec). When
// another writer took the step first it folds that writer's commit and
// returns ErrStepTaken, so the caller reads the recorded decision.
// Otherwise it counts the commit, folds its events into the state at
// once (applyOwn; a re-sent commit of ours, stored before, comes back
// without events and is answered with req's, placed at res.Seq) and waits
// for the fold to reach it: should the fold not get there, the step is
// recorded but unanswered, and "unknown" makes the client re-send it,
// which reads the recorded decision.
func (e *Engine) settle(ctx context.Context, start time.Time, dec policy.Decision, req events.AppendRequest, res events.AppendResult) (policy.Decision, []events.Event, error) {
	if res.Taken {
		if err := e.st.waitFold(ctx, res.Seq, events.NotStored); err != nil {
			return dec, nil, err
		}
		return policy.Decision{}, nil, &stepTakenError{seq: res.Seq}
	}
	e.commits.Add(1)
	e.observeAppend(start)
	evs := res.Events
	if evs == nil { // a re-sent commit of ours, stored before
		evs = req.Events
		for i := range evs {
			evs[i].Seq, evs[i].Index, evs[i].Basis = res.Seq, i, req.Basis
		}
	} else {
		e.st.applyOwn(res.Seq, req.Subject, evs)
	}
	if err := e.st.waitFold(ctx, res.Seq, events.OutcomeUnknown); err != nil {
		return dec, nil, err
	}
	return dec, evs, nil
}

// route names the subject a decision is stored under, its guard and the
// guard's expected last sequence (see commit and [events.ProfileGuards]).
// Call with the state's read lock held.
func (e *Engine) route(h home, ps []events.Payload) (events.AppendRequest, error) {
	r, err := routeOf(e.agent, h, ps)
	if err != nil {
		return events.AppendRequest{}, err
	}
	switch {
	case r.kind == healthNone:
		guard := r.subject
		if g := e.idleBeginGuard(h, ps); g != "" {
			guard = g
		}
		return events.AppendRequest{Subject: r.subject, Guard: guard, Expected: e.st.subjectSeq[guard]}, nil
	case r.kind == healthReset:
		return events.AppendRequest{Subject: r.subject, Guard: r.g.Failures, Expected: e.st.subjectSeq[r.g.Failures]}, nil
	case !e.st.profiles[r.prof].HasFailureState():
		// A failure on a clean profile: a reset stored since (decided on
		// failure state this decision saw cleared already) changes
		// nothing it depends on, so only failures and clears guard it.
		return events.AppendRequest{Subject: r.subject, Guard: r.g.Failures, Expected: e.st.subjectSeq[r.g.Failures], Urgent: true}, nil
	}
	var last uint64
	for _, s := range r.g.Subjects {
		last = max(last, e.st.subjectSeq[s])
	}
	return events.AppendRequest{Subject: r.subject, Guard: r.g.AnyOf, Expected: last, Urgent: true}, nil
}

// routed is where a decision goes: its subject, and for one that changes
// a profile's health (kind) that profile and its subjects.
type routed struct {
	subject string
	kind    int
	prof    string
	g       events.ProfileGuards
}

// routeOf names the subject a decision of agent homed at h is stored
// under, from its events alone: a decision that changes a profile's
// failure state under the profile's failures or resets subject, a turn
// decision that writes its session under the session's, any other under
// h's.
func routeOf(agent string, h home, ps []events.Payload) (routed, error) {
	prof, kind, err := profileOf(ps)
	if err != nil {
		return routed{}, err
	}
	if kind == healthNone {
		agg, key := h.agg, h.key
		if s := sessionOf(ps); s != "" && h.agg == events.AggTurn {
			// A turn decision that writes session state (an auto pin,
			// the fallback-notice state, an auto selection) is stored
			// under the session, guarded by it: a session command stored
			// since its read (/model, /new) makes it decide again on
			// the session as the command left it. The turn's own line
			// is kept by the step's message id.
			agg, key = events.AggSession, s
		}
		subject, err := events.Subject(agent, agg, key)
		if err != nil {
			return routed{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		return routed{subject: subject, kind: kind}, nil
	}
	g, err := events.ProfileGuardsOf(agent, prof)
	if err != nil {
		return routed{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	r := routed{subject: g.Failures, kind: kind, prof: prof, g: g}
	if kind == healthReset {
		r.subject = g.Resets
	}
	return r, nil
}

// TurnDecisionSubject is the subject an engine of agent stores a decision
// on turn turnID that holds ps under (routeOf): a generator of streams
// (`fledger bench`) writes them where an engine would, so a fold of them
// holds the same subjects' last sequences.
func TurnDecisionSubject(agent, turnID string, ps []events.Payload) (string, error) {
	r, err := routeOf(agent, home{agg: events.AggTurn, key: turnID}, ps)
	return r.subject, err
}

// stepMsgID is the message id of the decision on turn turnID taken after
// the turn's commit at prev (0 = the turn's start): every writer deciding
// that step derives the same id, so JetStream stores only one of them.
func stepMsgID(agent, turnID string, prev uint64) string {
	return derivedMsgID("step-", agent, turnID, strconv.FormatUint(prev, 10))
}

// derivedMsgID is prefix and the first 16 bytes, in hex, of the sha256 of
// agent, turnID and n, each ended by a zero byte but the last.
func derivedMsgID(prefix, agent, turnID, n string) string {
	h := sha256.New()
	h.Write([]byte(agent))
	h.Write([]byte{0})
	h.Write([]byte(turnID))
	h.Write([]byte{0})
	h.Write([]byte(n))
	return prefix + hex.EncodeToString(h.Sum(nil)[:16])
}

// beginSelectionMsgID is the message id of the selection a begin of
// turnID stores before the turn starts, at its try'th start (a begin
// whose selection another command replaced before its start records it
// again: startTurn): one per turn id and try, so the server keeps the
// first of several begins racing with the same id on several instances
// and refuses the others' (Taken) — a begin refused as a mismatch
// records nothing, its selection included.
func beginSelectionMsgID(agent, turnID string, try int) string {
	return derivedMsgID("begin-select-", agent, turnID, strconv.Itoa(try))
}

// markedTurn is the turn a session command marks a live switch on ("" =
// none).
func markedTurn(ps []events.Payload) string {
	for _, p := range ps {
		if m, ok := p.(events.LiveSwitchMarked); ok {
			return m.TurnID
		}
	}
	return ""
}

// retake reports whether a decision that lost its step (ErrStepTaken) is
// decided again: a session command always (its mark goes to the turn's
// next step, or away when the turn ended); a turn decision when the step
// went to a live-switch mark, so the turn is still where it was.
func (e *Engine) retake(h home, msgID string) bool {
	if h.agg != events.AggTurn {
		// A session command whose own id (a begin's selection) was
		// taken lost to another begin: its caller decides what then.
		// One that carried a marked turn's step id is decided again.
		return h.msgID == "" || msgID != h.msgID
	}
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	mark := e.st.turns[h.key].MarkSeq // policy.NoteSeq, folded with the commit
	return mark != 0 && mark == e.st.turnLast[h.key]
}

// sessionOf is the session a decision writes events of ("" = none; a
// turn decision writes at most its own session's).
func sessionOf(ps []events.Payload) string {
	for _, p := range ps {
		if p.EventAggregate() == events.AggSession {
			return events.KeyOf(p)
		}
	}
	return ""
}

// How a decision changes a profile's health (route).
const (
	healthNone    = iota // no profile event, or only a ProfileUsed (commutes)
	healthReset          // a ProfileSucceeded: clears failure state
	healthFailure        // a ProfileFailureRecorded or ProfileCleared
)

// profileOf returns the one profile whose failure state a decision changes
// ("" = none) and how, or ErrMultiProfileDecision. A ProfileUsed changes
// none.
func profileOf(ps []events.Payload) (string, int, error) {
	id, kind := "", healthNone
	for _, p := range ps {
		var pid string
		k := healthFailure
		switch e := p.(type) {
		case events.ProfileFailureRecorded:
			pid = e.ProfileID
		case events.ProfileSucceeded:
			pid, k = e.ProfileID, healthReset
		case events.ProfileCleared:
			pid = e.ProfileID
		default:
			continue
		}
		if id != "" && pid != id {
			return "", 0, fmt.Errorf("%w: %s and %s", ErrMultiProfileDecision, id, pid)
		}
		id, kind = pid, max(kind, k)
	}
	return id, kind, nil
}
