package engine

import (
	"context"
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Session commands. Each is decided by commands/policy on the session's
// current state and appended as one commit under
// fledger.<agent>.session.<key>, guarded by that subject's last sequence
// (a concurrent command on the same session makes one of them reload and
// decide again). Each returns the events it appended (none when the
// command changed nothing). A selection made while a turn runs applies
// from the next turn (POLICY "Order, pins, chain, selection source"); a
// user selection also marks a pending live switch the running turn takes
// at its next step (rule revision 3, [SelectionDecision]).

// SelectModel records `/model provider/model` with its source (user,
// default, auto, legacy; "" = user). A cron model is refused
// ([CheckSessionSource]): it is one turn's, the turn's cron payload
// ([TurnRequest.Cron]). origin is the configured model an auto override
// fell back from (source auto only). profile, when set, also pins that
// auth profile as a user pin (`/model p/m@profile`) in the same commit.
func (e *Engine) SelectModel(ctx context.Context, session string, m events.ModelRef, source string, origin *events.ModelRef, profile string) ([]events.Event, error) {
	if err := CheckSessionSource(source); err != nil {
		return nil, err
	}
	if err := CheckModelRef("model", m); err != nil {
		return nil, err
	}
	if origin != nil {
		if err := CheckModelRef("origin", *origin); err != nil {
			return nil, err
		}
	}
	if profile != "" {
		if err := CheckKey("profile", events.AggProfile, profile); err != nil {
			return nil, err
		}
	}
	if source == "" {
		source = string(policy.SourceUser)
	}
	if source == string(policy.SourceUser) {
		// A user selection marks the session's running turn: decide it on
		// every turn stored so far (a turn started on another instance
		// included). A turn whose start is stored after this sync and
		// before the selection's append is not marked (the selection's
		// basis does not hold it; verify re-decides it so); from rule
		// revision 5 that turn derives the switch at its next step
		// (policy's deriveSwitch), before it writes no auto pin over the
		// selection (selectionReplaced) and the next turn starts from it.
		if err := e.Sync(ctx); err != nil {
			return nil, err
		}
	}
	return e.sessionCommand(ctx, session, func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		return e.decideSelection(cfg, s, session, ModelSelection{Model: m, Source: source, Profile: profile}, origin)
	})
}

// CheckSessionSource checks the source of a new model selection of a
// session ("" = user): user, default, auto or legacy. Source cron is
// refused with ErrBadRequest: a cron model applies to one turn only (the
// turn's cron payload), and a session selection with source cron would
// make every later turn of the session a cron run. A SessionModelSelected
// with source cron stored by an earlier build still folds and verifies
// ([SelectionDecision] decides it as it was).
func CheckSessionSource(source string) error {
	switch policy.SelectionSource(source) {
	case "", policy.SourceUser, policy.SourceDefault, policy.SourceAuto, policy.SourceLegacy:
		return nil
	case policy.SourceCron:
		return fmt.Errorf("%w: %s", ErrBadRequest, CronSelectionRefused)
	}
	return fmt.Errorf("%w: source %q is not user|default|auto|legacy", ErrBadRequest, source)
}

// CronSelectionRefused is why a session selection with source cron is
// refused ([CheckSessionSource]).
const CronSelectionRefused = "source cron is not a session's selection: a cron model applies to one turn only; begin that turn with source cron and its model"

// decideSelection is SelectModel's decision, under the state's read lock:
// nothing when the selection changes nothing (policy.SelectionUnchanged:
// a `/model` of the session's current selection appends nothing and
// marks no live switch), else [SelectionDecision].
func (e *Engine) decideSelection(cfg *policy.Config, s policy.SessionState, session string, sel ModelSelection, origin *events.ModelRef) ([]events.Payload, error) {
	if policy.SelectionUnchanged(s, sel.Model, policy.SelectionSource(sel.Source), origin, sel.Profile) {
		return nil, nil
	}
	return SelectionDecision(cfg, s, e.st.running(session), session, sel.Model, sel.Source, origin, sel.Profile)
}

// SelectionDecision decides `/model provider/model[@profile]` on session
// state s: the selection (policy.SelectModel), the user pin of profile
// when given, and the pending live switch a user selection marks on the
// session's running turn (policy.MarkLiveSwitch, rule revision 3), in
// that order. running lists the session's running turns. Replay's verify
// re-decides a selection with it. It decides a selection that changes
// nothing too (SelectModel asks policy.SelectionUnchanged first and
// appends nothing then; builds before that stored such a repeat, and it
// still verifies).
func SelectionDecision(cfg *policy.Config, s policy.SessionState, running []policy.TurnState, session string, m events.ModelRef, source string, origin *events.ModelRef, profile string) ([]events.Payload, error) {
	out, err := policy.SelectModel(s, session, m, policy.SelectionSource(source), origin)
	if err != nil {
		return nil, err
	}
	if profile != "" {
		w := policy.NewWorld(policy.TurnState{}, policy.Env{Session: s})
		w.Fold(out...)
		pin, err := cfg.PinProfile(w.Session(), session, profile)
		if err != nil {
			return nil, err
		}
		out = append(out, pin...)
	}
	return append(out, policy.MarkLiveSwitch(running, session, m, profile, policy.SelectionSource(source))...), nil
}

// ClearModel records `/model default`: the override is cleared; a pin
// compatible with agent's default primary is kept. A user's model change
// like `/model`, it also marks a pending live switch to the agent's
// default primary on the session's running turn (rule revision 3,
// [ClearDecision]); like SelectModel it first syncs, so a turn started on
// another instance is marked too.
func (e *Engine) ClearModel(ctx context.Context, session, agent string) ([]events.Event, error) {
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	return e.sessionCommand(ctx, session, func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		return ClearDecision(cfg, s, e.st.running(session), session, agent), nil
	})
}

// ClearDecision decides `/model default` on session state s: the clear
// (policy.Config.ClearModel) and, when it cleared a model override, the
// pending live switch to agent's default primary it marks on the
// session's running turn (policy.Config.MarkDefaultSwitch, rule revision
// 3), in that order. running lists the session's running turns. Replay's
// verify re-decides a `/model default` with it.
func ClearDecision(cfg *policy.Config, s policy.SessionState, running []policy.TurnState, session, agent string) []events.Payload {
	out := cfg.ClearModel(s, session, agent)
	return append(out, cfg.MarkDefaultSwitch(running, session, agent, s.Model != (policy.ModelRef{}))...)
}

// PinProfile pins an auth profile on the session. source user is
// `/model …@profile` (survives resets and compaction); source auto records
// an automatic pin (e.g. imported session state).
func (e *Engine) PinProfile(ctx context.Context, session, profile, source string) ([]events.Event, error) {
	if err := CheckKey("profile", events.AggProfile, profile); err != nil {
		return nil, err
	}
	return e.sessionCommand(ctx, session, func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		switch source {
		case "", string(policy.PinUser):
			return cfg.PinProfile(s, session, profile)
		case string(policy.PinAuto):
			p, ok := cfg.Profile(profile)
			if !ok {
				return nil, fmt.Errorf("%w: %q", policy.ErrUnknownProfile, profile)
			}
			if s.Pin == profile && s.PinSource == policy.PinAuto {
				return nil, nil
			}
			var out []events.Payload
			if s.Pin != "" {
				out = append(out, events.SessionAuthUnpinned{Session: session, ProfileID: s.Pin, Source: string(s.PinSource), Cause: policy.UnpinReplaced})
			}
			return append(out, events.SessionAuthPinned{Session: session, ProfileID: profile, Provider: p.Provider, Source: string(policy.PinAuto)}), nil
		}
		return nil, fmt.Errorf("%w: pin source %q is not auto|user", ErrBadRequest, source)
	})
}

// Reset records `/new` (kind "new") or `/reset` (kind "reset"): a stored
// auto override and an automatic pin are cleared; a user selection and a
// user pin survive.
func (e *Engine) Reset(ctx context.Context, session, kind string) ([]events.Event, error) {
	if kind != "new" && kind != "reset" {
		return nil, fmt.Errorf("%w: reset kind %q is not new|reset", ErrBadRequest, kind)
	}
	return e.sessionCommand(ctx, session, func(_ *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		return policy.ResetSession(s, session, kind), nil
	})
}

// CompleteCompaction records a completed compaction: the count increments
// and an automatic pin is cleared (unless
// auth.cooldowns.autoPinSurvivesCompaction).
func (e *Engine) CompleteCompaction(ctx context.Context, session string) ([]events.Event, error) {
	return e.sessionCommand(ctx, session, func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error) {
		return cfg.CompleteCompaction(s, session), nil
	})
}

func (e *Engine) sessionCommand(ctx context.Context, session string,
	decide func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error)) ([]events.Event, error) {
	return e.sessionCommandAs(ctx, session, "", decide)
}

// sessionCommandAs is sessionCommand whose commit carries message id
// msgID (home.msgID; "" = the first event's id).
func (e *Engine) sessionCommandAs(ctx context.Context, session, msgID string,
	decide func(cfg *policy.Config, s policy.SessionState) ([]events.Payload, error)) ([]events.Event, error) {
	if session == "" {
		return nil, fmt.Errorf("%w: empty session", ErrBadRequest)
	}
	if err := CheckStoredKey("session", events.AggSession, session); err != nil {
		return nil, err
	}
	_, evs, err := e.commit(ctx, e.opt.clock.Now(), home{agg: events.AggSession, key: session, msgID: msgID}, "", func() (policy.Decision, error) {
		cfg := e.st.configs[e.st.current]
		if cfg == nil {
			return policy.Decision{}, ErrNoConfig
		}
		var s policy.SessionState
		if v := e.st.sessions[session]; v != nil {
			s = v.state
		} else if err := CheckKey("session", events.AggSession, session); err != nil && !e.st.knowsSession(session) {
			// A session's first command holds its key to the rule of new
			// ids; one stored before the rule goes on.
			return policy.Decision{}, err
		}
		ps, err := decide(cfg, s)
		return policy.Decision{Events: ps}, err
	})
	return evs, err
}

// SetAuthOrder records `models auth order set --provider <provider> <ids…>`
// (seed 000 "Rotation order"): the agent's stored auth-profile order for
// provider, ahead of auth.order in every later rotation. Every id must be a
// configured profile of provider, listed once (policy.Config.SetOrder); an
// empty ids clears the override. A provider no configured profile has is
// refused (policy.Config.CheckOrderProvider, ErrBadOrder), set or clear,
// unless an order is stored for it: that one may still be cleared. The AuthOrderSet is appended under
// fledger.<agent>.order.<provider>, guarded by that subject's last
// sequence. by names who set it ([CheckBy]: 1..[MaxByLen] bytes, one line).
func (e *Engine) SetAuthOrder(ctx context.Context, provider string, ids []string, by string) ([]events.Event, error) {
	if provider == "" {
		return nil, fmt.Errorf("%w: empty provider", ErrBadRequest)
	}
	if err := CheckKey("provider", events.AggOrder, provider); err != nil {
		return nil, err
	}
	if err := CheckBy(by); err != nil {
		return nil, err
	}
	_, evs, err := e.commit(ctx, e.opt.clock.Now(), home{agg: events.AggOrder, key: provider}, "", func() (policy.Decision, error) {
		cfg := e.st.configs[e.st.current]
		if cfg == nil {
			return policy.Decision{}, ErrNoConfig
		}
		// A provider no configured profile has is refused, except that an
		// order already stored for it (under an earlier config) may be
		// cleared.
		if len(ids) > 0 || len(e.st.orders[provider]) == 0 {
			if err := cfg.CheckOrderProvider(provider); err != nil {
				return policy.Decision{}, err
			}
		}
		p, err := cfg.SetOrder(provider, ids, by)
		if err != nil {
			return policy.Decision{}, err
		}
		return policy.Decision{Events: []events.Payload{p}}, nil
	})
	return evs, err
}

// AuthOrder returns the stored auth-profile order of provider as folded so
// far (nil when none is stored).
func (e *Engine) AuthOrder(provider string) []string {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	return append([]string(nil), e.st.orders[provider]...)
}

// AuthOrders returns every stored auth-profile order, by provider.
func (e *Engine) AuthOrders() map[string][]string {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	out := make(map[string][]string, len(e.st.orders))
	for k, v := range e.st.orders {
		out[k] = append([]string(nil), v...)
	}
	return out
}
