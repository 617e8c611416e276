package policy

import (
	"errors"

	"github.com/fledger/fledger/events"
)

// Route origins of chain entries (reference §6).
const (
	OriginRequested          = "requested"
	OriginConfiguredFallback = "configured-fallback"
	OriginConfiguredPrimary  = "configured-primary"
)

// BuildChain builds the candidate chain (seed 000 "Candidate chain rules";
// reference §6):
//
//   - the requested model first (primary when requested is zero);
//   - then fallbacks: the fallbacksOverride when override is true, else the
//     configured fallbacks;
//   - then the configured primary, only when override is false;
//   - deduplicated by exact provider/model, first occurrence wins; zero
//     entries are dropped. Fallbacks are not filtered by any allowlist.
//
// override with an empty list is strict: the chain is the requested model
// alone.
func BuildChain(requested ModelRef, fallbacks []ModelRef, override bool, primary ModelRef) []events.Candidate {
	if requested == (ModelRef{}) {
		requested = primary
	}
	out := make([]events.Candidate, 0, len(fallbacks)+2)
	add := func(m ModelRef, origin string) {
		if m.Provider == "" || m.Model == "" {
			return
		}
		for _, c := range out {
			if c.Provider == m.Provider && c.Model == m.Model {
				return
			}
		}
		out = append(out, events.Candidate{Provider: m.Provider, Model: m.Model, RouteOrigin: origin})
	}
	add(requested, OriginRequested)
	for _, f := range fallbacks {
		add(f, OriginConfiguredFallback)
	}
	if !override {
		add(primary, OriginConfiguredPrimary)
	}
	return out
}

// CronPayload is a cron job's payload.model / payload.fallbacks. A cron
// model is a job primary, not a user override (seed 000).
type CronPayload struct {
	Model        ModelRef
	Fallbacks    []ModelRef
	HasFallbacks bool
}

// SelectRequest is what [Config.Select] needs besides the session state.
type SelectRequest struct {
	// Agent is the OpenClaw agent id (agents.entries key), "" for none.
	Agent string
	// Cron is the cron payload when the turn is a cron run.
	Cron *CronPayload
	// Now is the decision time, Unix ms.
	Now int64
	// LastAutoProbeAt is when the session's stored auto override last
	// probed its origin (Unix ms; 0 = never): the engine reads it from the
	// last TurnStarted with AutoOriginProbe of the session.
	LastAutoProbeAt int64
	// FallbacksOverride, when not nil, is the caller's fallbacksOverride
	// for this turn (seed 000 "Candidate chain rules": "When a caller
	// supplies fallbacksOverride, the runner uses exactly the requested
	// model plus that override list. An empty list disables model
	// fallback and prevents the configured primary from being appended"):
	// it replaces whatever fallbacks the selection source would use.
	FallbacksOverride *[]ModelRef
}

// Selection is the model a turn starts from, why, and its chain.
type Selection struct {
	// Requested is chain[0].
	Requested ModelRef
	// Source is default | agent | user | legacy | auto | cron.
	Source SelectionSource
	// Strict is true when policy allows no fallback (chain of one).
	Strict bool
	Chain  []events.Candidate
	// AutoOriginProbe is true when a stored auto override's origin is
	// tried first this turn (every AutoOverrideProbeIntervalMs).
	AutoOriginProbe bool
	// FallbacksOverride is true when the caller supplied the fallbacks
	// (SelectRequest.FallbacksOverride): TurnStarted records it.
	FallbacksOverride bool
}

// ErrNoModel is returned when no model is selected and none is configured.
var ErrNoModel = errors.New("policy: no model selected and no primary configured")

// configuredFallbacks returns the configured fallbacks for agent: the
// agent's own list when its model object has one, else the defaults'.
func (c Config) configuredFallbacks(agent string) []ModelRef {
	if a, ok := c.Agents[agent]; ok && a.HasFallbacks {
		return a.Fallbacks
	}
	return c.Defaults.Fallbacks
}

// configuredPrimary returns the agent's primary when it has one, else
// agents.defaults.model.primary.
func (c Config) configuredPrimary(agent string) ModelRef {
	if a, ok := c.Agents[agent]; ok && a.Primary != (ModelRef{}) {
		return a.Primary
	}
	return c.Defaults.Primary
}

// Select resolves the selection source and builds the chain (seed 000
// "Selection source policy"; reference §6), in precedence order:
//
//   - cron payload model: job primary with the configured fallbacks, or
//     payload.fallbacks as the override ([] = strict);
//   - a stored session override: user and legacy (no source) are strict;
//     cron keeps its stored fallbacks; auto uses the configured chain and,
//     every AutoOverrideProbeIntervalMs, starts from its origin instead; an
//     explicit "default" source (reference §6) is no override at all and
//     falls through to the two rules below, so an agent's strictness is
//     the same with or without it;
//   - an agent primary (agents.entries.<id>.model): strict unless the
//     agent's model object has its own fallbacks ([] = strict);
//   - the configured default primary with agents.defaults.model.fallbacks,
//     primary appended.
func (c Config) Select(s SessionState, req SelectRequest) (Selection, error) {
	primary := c.configuredPrimary(req.Agent)
	fallbacks := c.configuredFallbacks(req.Agent)
	sel := Selection{}
	var requested ModelRef
	override, overrideList := false, []ModelRef(nil)
	switch {
	case req.Cron != nil && req.Cron.Model != (ModelRef{}):
		sel.Source, requested = SourceCron, req.Cron.Model
		if req.Cron.HasFallbacks {
			override, overrideList = true, req.Cron.Fallbacks
		}
	case s.Model != (ModelRef{}) && s.Source == SourceCron:
		sel.Source, requested = SourceCron, s.Model
		if s.HasFallbacks {
			override, overrideList = true, s.Fallbacks
		}
	case s.Model != (ModelRef{}) && s.Source == SourceAuto:
		sel.Source, requested = SourceAuto, s.Model
		if s.Origin != (ModelRef{}) && req.Now-req.LastAutoProbeAt >= c.AutoOverrideProbeIntervalMs {
			requested, sel.AutoOriginProbe = s.Origin, true
		}
	case s.Model != (ModelRef{}) && s.Source != SourceDefault:
		sel.Source, requested = SourceUser, s.Model
		if s.Source != SourceUser {
			sel.Source = SourceLegacy
		}
		override = true
	case req.Agent != "" && c.Agents[req.Agent].Primary != (ModelRef{}):
		a := c.Agents[req.Agent]
		sel.Source, requested = SourceAgent, a.Primary
		override, overrideList = true, nil
		if a.HasFallbacks {
			overrideList = a.Fallbacks
		}
	default:
		sel.Source, requested = SourceDefault, c.Defaults.Primary
	}
	if req.FallbacksOverride != nil {
		override, overrideList, sel.FallbacksOverride = true, *req.FallbacksOverride, true
	}
	if override {
		fallbacks = overrideList
	}
	sel.Chain = BuildChain(requested, fallbacks, override, primary)
	if len(sel.Chain) == 0 {
		return Selection{}, ErrNoModel
	}
	sel.Requested = ModelRef{Provider: sel.Chain[0].Provider, Model: sel.Chain[0].Model}
	sel.Strict = override && len(sel.Chain) == 1
	return sel, nil
}
