package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// ModelSelection is a `/model provider/model[@profile]` a turn starts
// from ([TurnRequest.Select]).
type ModelSelection struct {
	Model events.ModelRef
	// Source is user, default, auto or legacy ("" = user); a cron model
	// is [TurnRequest.Cron], not a selection.
	Source string
	// Profile, when set, is pinned as a user pin in the same commit.
	Profile string
}

// ErrSelectionMoved: between a begin's selection ([TurnRequest.Select])
// and the decision of its start, another selection of the session was
// folded (another begin with another model, a `/model`), so the turn
// would start on that one. BeginTurn and RunTurn record the begin's
// selection again and decide the start again; after the engine's
// conflict retries ([WithConflictRetries]) they give up with an error
// that is both ErrConflictRetries and ErrSelectionMoved, nothing started.
var ErrSelectionMoved = errors.New("engine: the session's model selection changed before the turn started on it")

// source is the selection's source, "" read as user.
func (s ModelSelection) source() policy.SelectionSource {
	if s.Source == "" {
		return policy.SourceUser
	}
	return policy.SelectionSource(s.Source)
}

// validateSelection checks req.Select before anything is recorded.
func validateSelection(req TurnRequest) error {
	sel := req.Select
	if sel == nil {
		return nil
	}
	if req.Cron != nil {
		return fmt.Errorf("%w: a turn takes a cron payload or a model selection, not both", ErrBadRequest)
	}
	if err := CheckModelRef("model", sel.Model); err != nil {
		return err
	}
	if err := CheckSessionSource(sel.Source); err != nil {
		return err
	}
	if sel.Profile != "" {
		return CheckKey("profile", events.AggProfile, sel.Profile)
	}
	return nil
}

// startTurn records req.Select (when set) and then decides and appends
// req's TurnStarted at the engine's clock. The start is guarded by the
// turn subject only, so a selection of the session folded between the two
// (another begin with another model and another turn id, a concurrent
// `/model`) would start the turn on that model: decideStart then refuses
// with ErrSelectionMoved, and the selection is recorded again and the
// start decided again, at most the engine's conflict retries times. The
// start itself is still decided from the session state (replay's verify
// re-decides it so); the check only refuses a state that no longer holds
// the begin's selection.
func (e *Engine) startTurn(ctx context.Context, req TurnRequest) (policy.Decision, []events.Event, error) {
	for try := 0; ; try++ {
		if err := e.selectForTurn(ctx, req, try); err != nil {
			return policy.Decision{}, nil, err
		}
		if e.afterSelect != nil {
			e.afterSelect(req.TurnID)
		}
		now := e.opt.clock.Now()
		dec, evs, err := e.commit(ctx, now, home{agg: events.AggTurn, key: req.TurnID}, req.TurnID, e.decideStart(req, now))
		if !errors.Is(err, ErrSelectionMoved) {
			return dec, evs, err
		}
		if try >= e.opt.retries {
			subject, _ := events.Subject(e.agent, events.AggSession, req.Session)
			return policy.Decision{}, nil, &ConflictRetriesError{Subject: subject, Tries: try + 1,
				Last: fmt.Errorf("turn %q of session %q: another selection replaced this begin's %s before the turn could start on it (%w); send the begin again",
					req.TurnID, req.Session, req.Select.Model, ErrSelectionMoved)}
		}
	}
}

// selectionHeld reports whether session state s still holds req's
// selection as [Engine.selectForTurn] recorded it (true without one):
// recording it again would change nothing (policy.SelectionUnchanged, the
// predicate that selection's decision asks first).
func selectionHeld(req TurnRequest, s policy.SessionState) bool {
	sel := req.Select
	return sel == nil || policy.SelectionUnchanged(s, sel.Model, sel.source(), nil, sel.Profile)
}

// selectForTurn records req.Select (when set) for req's session before
// the turn starts, as one session command (engine.md "A begin with a
// model"). Its decision refuses (ErrTurnExists, nothing appended) once
// the fold holds the turn id, so a begin that lost a race to another
// begin of the same id records no selection once it has seen the winner;
// a selection that changes nothing appends nothing, so identical racing
// begins record it at most once. The selection is a separate commit from
// the TurnStarted (a selection that marks a live switch on another of the
// session's turns is stored with that turn's step id, which the start
// cannot also carry): after a crash between the two, the retried begin
// finds no turn, its selection changes nothing, and the turn starts.
// Begins of one turn id racing on several instances store one selection:
// its message id is the turn id's (beginSelectionMsgID), so the server
// refuses every other begin's (lostBeginSelection), which then answers as
// for the existing turn once the winner has started it.
func (e *Engine) selectForTurn(ctx context.Context, req TurnRequest, try int) error {
	sel := req.Select
	if sel == nil {
		return nil
	}
	if sel.Source == "" {
		sel = &ModelSelection{Model: sel.Model, Source: string(sel.source()), Profile: sel.Profile}
	}
	if e.beforeSelect != nil {
		e.beforeSelect(req.TurnID)
	}
	if err := e.turnStartedElsewhere(ctx, req); err != nil {
		return err
	}
	// An id whose selection is this very request's (an earlier try of
	// this begin, or of its re-send, within the server's duplicate
	// window) is passed over for the next one.
	for id := try; id < try+maxBeginSelectionIDs; id++ {
		_, err := e.sessionCommandAs(ctx, req.Session, beginSelectionMsgID(e.agent, req.TurnID, id), func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
			if t, ok := e.st.turns[req.TurnID]; ok && t.Phase != "" {
				return nil, fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
			}
			return e.decideSelection(cfg, s, req.Session, *sel, nil)
		})
		var taken *stepTakenError
		if !errors.As(err, &taken) {
			return err
		}
		same, err := e.storedSelectionIs(ctx, taken.seq, *sel)
		if err != nil {
			return err
		}
		if !same {
			return e.lostBeginSelection(ctx, req)
		}
	}
	subject, _ := events.Subject(e.agent, events.AggSession, req.Session)
	return &ConflictRetriesError{Subject: subject, Tries: maxBeginSelectionIDs,
		Last: fmt.Errorf("turn %q: %d selections of this begin were stored and replaced (%w); send the begin again", req.TurnID, maxBeginSelectionIDs, ErrSelectionMoved)}
}

// maxBeginSelectionIDs bounds the message ids a begin's selection passes
// over (its own earlier tries') before it gives up.
const maxBeginSelectionIDs = 64

// storedSelectionIs reports whether the commit at seq (one holding a
// begin's selection message id) selects what sel does: the model, the
// source and, with a profile, that pin.
func (e *Engine) storedSelectionIs(ctx context.Context, seq uint64, sel ModelSelection) (bool, error) {
	model, pinned := false, sel.Profile == ""
	for ev, err := range e.store.Read(ctx, seq) {
		if err != nil {
			return false, err
		}
		if ev.Seq != seq {
			break
		}
		switch p := ev.Data.(type) {
		case events.SessionModelSelected:
			model = p.Model == sel.Model && policy.SelectionSource(p.Source) == sel.source()
		case events.SessionAuthPinned:
			pinned = pinned || p.ProfileID == sel.Profile
		}
	}
	return model && pinned, nil
}

// turnStartedElsewhere looks at the turn's subject on the server just
// before a begin stores a selection that changes the session: a begin of
// the same turn id on another instance whose selection changed nothing
// (it had no model, or the session already held it) stores only its
// start, so it claims no selection id; a begin that finds that start
// answers as for the existing turn (ErrTurnExists) and stores nothing.
// One round trip, only for a selection that changes something; a start
// stored after this look still races (engine.md "A begin with a model").
func (e *Engine) turnStartedElsewhere(ctx context.Context, req TurnRequest) error {
	e.st.mu.RLock()
	var s policy.SessionState
	if v := e.st.sessions[req.Session]; v != nil {
		s = v.state
	}
	held := selectionHeld(req, s)
	e.st.mu.RUnlock()
	if held {
		return nil
	}
	subject, err := events.Subject(e.agent, events.AggTurn, req.TurnID)
	if err != nil {
		return err
	}
	last, err := e.store.LastSeq(ctx, subject)
	if err != nil || last == 0 {
		return err
	}
	if err := e.SyncTo(ctx, last); err != nil {
		return err
	}
	return fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
}

// beginRaceWait bounds how long a begin whose selection lost to another
// begin of the same turn id waits for that begin's TurnStarted.
const beginRaceWait = 2 * time.Second

// lostBeginSelection: another begin of req's turn id (on this instance or
// another) stored its selection first, under the same message id, so
// this one's was not stored. Once the winner's turn is folded, the begin
// answers as for an existing turn (ErrTurnExists: replayed, or a
// mismatch that records nothing); a winner that has not started the turn
// within beginRaceWait (it may have crashed between the two commits) is
// a contention the client retries.
func (e *Engine) lostBeginSelection(ctx context.Context, req TurnRequest) error {
	deadline := time.Now().Add(beginRaceWait)
	for {
		if err := e.Sync(ctx); err != nil {
			return err
		}
		e.st.mu.RLock()
		t, ok := e.st.turns[req.TurnID]
		e.st.mu.RUnlock()
		if ok && t.Phase != "" {
			return fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
		}
		if time.Now().After(deadline) {
			subject, _ := events.Subject(e.agent, events.AggSession, req.Session)
			return &ConflictRetriesError{Subject: subject, Tries: 1,
				Last: fmt.Errorf("another begin of turn %q stored its model selection first and has not started the turn yet (%w); send the begin again", req.TurnID, ErrStepTaken)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
