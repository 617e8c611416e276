package engine

import (
	"context"
	"fmt"

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
	switch policy.SelectionSource(sel.Source) {
	case "", policy.SourceUser, policy.SourceDefault, policy.SourceAuto, policy.SourceLegacy:
	default:
		return fmt.Errorf("%w: selection source %q is not user|default|auto|legacy (a cron model is the turn's cron payload)", ErrBadRequest, sel.Source)
	}
	if sel.Profile != "" {
		return CheckKey("profile", events.AggProfile, sel.Profile)
	}
	return nil
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
func (e *Engine) selectForTurn(ctx context.Context, req TurnRequest) error {
	sel := req.Select
	if sel == nil {
		return nil
	}
	if sel.Source == "" {
		sel = &ModelSelection{Model: sel.Model, Source: string(policy.SourceUser), Profile: sel.Profile}
	}
	_, err := e.sessionCommand(ctx, req.Session, func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		if t, ok := e.st.turns[req.TurnID]; ok && t.Phase != "" {
			return nil, fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
		}
		return e.decideSelection(cfg, s, req.Session, *sel, nil)
	})
	return err
}
