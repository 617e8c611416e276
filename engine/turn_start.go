package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// normalizeTurn validates req and fills its defaults: chat "" = direct, a
// fresh UUIDv7 turn id, a seed from the engine's seed source. Shared by
// [Engine.RunTurn] and [Engine.BeginTurn].
func (e *Engine) normalizeTurn(req TurnRequest) (TurnRequest, error) {
	v := req
	if v.Agent == e.agent {
		// The engine's own agent was held to the agent rule when it was
		// served (serve.New; an agent the ledger holds goes on whatever
		// its id).
		v.Agent = ""
	}
	if err := ValidateTurnRequest(v); err != nil {
		return req, err
	}
	if req.Chat == "" {
		req.Chat = ChatDirect
	}
	if req.TurnID == "" {
		req.TurnID = uuid.Must(uuid.NewV7()).String()
	}
	if !req.HasSeed {
		req.Seed = e.opt.seeds(req.TurnID)
	}
	return req, nil
}

// decideStart is the decision that opens a turn at now: select the model
// and chain from the session and the config in force, then
// policy.StartTurn. It runs under the state's read lock (see commit). A
// begin with a model is refused with ErrSelectionMoved when the session
// no longer holds that selection ([Engine.startTurn] records it again).
func (e *Engine) decideStart(req TurnRequest, now time.Time) func() (policy.Decision, error) {
	return func() (policy.Decision, error) {
		cfg := e.st.configs[e.st.current]
		if cfg == nil {
			return policy.Decision{}, ErrNoConfig
		}
		if t, ok := e.st.turns[req.TurnID]; ok && t.Phase != "" {
			return policy.Decision{}, fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
		}
		ms := events.Millis(now)
		env := e.st.env(cfg, req.Session, ms)
		if !selectionHeld(req, env.Session) {
			return policy.Decision{}, fmt.Errorf("%w: session %q no longer holds %s for turn %q", ErrSelectionMoved, req.Session, req.Select.Model, req.TurnID)
		}
		lastProbe := int64(0)
		if v := e.st.sessions[req.Session]; v != nil {
			lastProbe = v.lastAutoProbeAt
		}
		sel, err := cfg.Select(env.Session, policy.SelectRequest{Agent: req.Agent, Cron: req.Cron, Now: ms, LastAutoProbeAt: lastProbe,
			FallbacksOverride: req.FallbacksOverride})
		if errors.Is(err, policy.ErrNoModel) {
			agent := req.Agent
			if agent == "" {
				agent = e.agent
			}
			return policy.Decision{}, &NoModelError{Agent: agent}
		}
		if err != nil {
			return policy.Decision{}, err
		}
		return policy.StartTurn(sel, env, policy.StartInput{TurnID: req.TurnID, Session: req.Session, Chat: req.Chat, Seed: req.Seed, Rules: e.opt.rules,
			SkipCacheSince: e.skipSince})
	}
}
