// Package serve is the failover ledger as a service for gateways in any
// language: the step protocol (begin a turn, report each attempt's
// outcome, resume after a wait), session commands and reads, over a JSON
// HTTP API ([Service.Handler]) and the same operations as a NATS micro
// service named "fledger" ([Service.StartMicro]). Every operation is an
// [engine.Engine] step, so several serve instances on one stream share
// one truth about cooldowns, and any instance can continue a turn another
// began.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// Defaults of [Config].
const (
	DefaultAgent           = "main"
	DefaultMaxBodyBytes    = 1 << 20
	DefaultResumeGrace     = time.Second
	DefaultProjectInterval = 500 * time.Millisecond
	DefaultDecisionsLimit  = 500
	MaxDecisionsLimit      = 5000
)

// Config configures a [Service].
type Config struct {
	// Store is the event store (required).
	Store events.Store
	// Agents are the agent ids served (stream namespaces; default
	// ["main"]); the first is the default agent of requests naming none.
	Agents []string
	// Config, when set, is applied to every served agent at start
	// (engine.ApplyConfig: nothing is appended when the agent's latest
	// ConfigApplied has the same hash). Without it the agent's latest
	// ConfigApplied is used; with neither, turns are refused (no_config).
	Config       *config.Loaded
	ConfigSource string
	// Projections, when set, is kept caught up with the stream in the
	// background (every ProjectInterval, default 500 ms) and serves GET
	// /v1/decisions and the lag in GET /healthz.
	Projections     *projections.DB
	ProjectInterval time.Duration
	// QuarantineAckThrough acknowledges the quarantined messages and
	// missing sequences at or before it: GET /healthz still lists them,
	// but only those after it make it degraded (an operator who looked at
	// a stray message stops it from hiding later trouble; 0 = none).
	QuarantineAckThrough uint64
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every route but /healthz.
	Token string
	// MaxBodyBytes limits every request body (default 1 MiB).
	MaxBodyBytes int64
	// ResumeGrace: a resume that arrives this early (or less) before the
	// wait ends is held until then instead of answered 425 (default 1 s;
	// negative = never hold).
	ResumeGrace time.Duration
	// EngineOptions are passed to every engine (tests: WithClock,
	// WithSeeds).
	EngineOptions []engine.Option
	// Metrics, when set (e.g. the projections/metrics registry), is
	// gathered at /metrics together with the service's own registry
	// (requests, engine commits and conflicts, projection lag). Without
	// it the service's registry also holds the Go and process collectors.
	Metrics prometheus.Gatherer
	// ReadOnly serves the ledger without recording anything (`fledger
	// view`): every POST but those of ReadOnlyPosts is answered 403
	// read_only; Config must be nil.
	ReadOnly bool
	// Log receives request errors and lifecycle messages (default
	// slog.Default()).
	Log *slog.Logger
	// SessionMaintenance, when set, prunes idle sessions of every
	// served agent in the background (OpenClaw's session.maintenance in
	// enforce mode); nil = off, as OpenClaw's default warn mode prunes
	// nothing. A read-only server runs none.
	SessionMaintenance *SessionMaintenance
}

func (c *Config) setDefaults() {
	if len(c.Agents) == 0 {
		c.Agents = []string{DefaultAgent}
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.ResumeGrace == 0 {
		c.ResumeGrace = DefaultResumeGrace
	}
	if c.ProjectInterval <= 0 {
		c.ProjectInterval = DefaultProjectInterval
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.ConfigSource == "" {
		c.ConfigSource = "serve"
	}
}

// Validate checks the config after defaults.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("serve: no store")
	}
	if c.ReadOnly && c.Config != nil {
		return errors.New("serve: a read-only server applies no config")
	}
	if c.SessionMaintenance != nil {
		if err := c.SessionMaintenance.Check(); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for i, a := range c.Agents {
		if a == "" {
			return fmt.Errorf("serve: agent %d of %d is empty (a trailing or doubled comma in --agent?)", i+1, len(c.Agents))
		}
		// A served agent is written to: New holds a new one to the rule
		// of a request's (a config names it; engine.CheckWritableAgent);
		// one the ledger holds, and every agent of a read-only server, is
		// served whatever its id.
		if _, err := events.AggregateFilter(a, events.AggTurn); err != nil {
			return fmt.Errorf("serve: agent %q: %w", a, err)
		}
		if seen[a] {
			return fmt.Errorf("serve: agent %q listed twice", a)
		}
		seen[a] = true
	}
	return nil
}

// Service holds the engines of the served agents and the operations the
// HTTP API and the micro service expose. It is safe for concurrent use.
type Service struct {
	health  healthMemo
	cfg     Config
	engines map[string]*engine.Engine
	proj    *projector
	metrics *metrics
	clock   engine.Clock
	// whatIfs holds a token per what-if running (whatIfSlots at most);
	// another waits whatIfWait for one.
	whatIfs    chan struct{}
	whatIfWait time.Duration
	// maint runs session maintenance (nil when off).
	maint *maintainer
}

// New starts an engine per served agent (each caught up with the
// stream), applies cfg.Config, and starts the background projector. Close
// it when done.
func New(ctx context.Context, cfg Config) (*Service, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, engines: map[string]*engine.Engine{}, whatIfs: make(chan struct{}, whatIfSlots), whatIfWait: whatIfWait}
	opts := cfg.EngineOptions
	if cfg.ReadOnly {
		// A read-only server stores nothing, snapshots included.
		opts = append(slices.Clip(opts), engine.WithSnapshotsReadOnly())
	}
	// Every agent's id first, before anything is written: a new agent
	// is held to the config's rule, one the ledger holds goes on.
	for _, a := range cfg.Agents {
		if cfg.ReadOnly {
			break
		}
		if err := engine.ValidateAgent(a); err != nil {
			known, kerr := engine.AgentInLedger(ctx, cfg.Store, a)
			if kerr != nil {
				return nil, fmt.Errorf("serve: agent %s: %w", a, kerr)
			}
			if !known {
				return nil, fmt.Errorf("serve: agent %w", err)
			}
		}
	}
	for _, a := range cfg.Agents {
		e, err := engine.New(ctx, cfg.Store, a, opts...)
		if err != nil {
			s.closeEngines()
			return nil, fmt.Errorf("serve: agent %s: %w", a, err)
		}
		s.engines[a] = e
		s.clock = e.Clock()
		if cfg.Config != nil {
			if _, _, err := e.ApplyConfig(ctx, cfg.ConfigSource, cfg.Config); err != nil {
				s.closeEngines()
				return nil, fmt.Errorf("serve: apply config to agent %s: %w", a, err)
			}
		}
	}
	s.metrics = newMetrics(s)
	if cfg.Projections != nil {
		s.proj = startProjector(cfg.Projections, cfg.Store, cfg.ProjectInterval, cfg.Log)
	}
	if !cfg.ReadOnly {
		logMaintenance(cfg.Log, cfg.SessionMaintenance)
		s.maint = s.startMaintenance(cfg.SessionMaintenance)
	}
	return s, nil
}

func (s *Service) closeEngines() {
	for _, e := range s.engines {
		e.Close()
	}
}

// Close finishes the projector's batch in progress (and one last
// catch-up, bounded by ctx) and stops the engines. It closes neither the
// store nor the projection database.
func (s *Service) Close(ctx context.Context) {
	s.maint.stop()
	if s.proj != nil {
		s.proj.stop(ctx)
	}
	s.closeEngines()
}

// Agents lists the served agents, the default first.
func (s *Service) Agents() []string { return append([]string(nil), s.cfg.Agents...) }

func (s *Service) engine(agent string) (*engine.Engine, string, error) {
	if agent == "" {
		agent = s.cfg.Agents[0]
	}
	e := s.engines[agent]
	if e == nil {
		return nil, agent, apiErr(http.StatusNotFound, CodeUnknownAgent, "agent %q is not served here (served: %s)", agent, strings.Join(s.cfg.Agents, ", "))
	}
	return e, agent, nil
}

// turnEngine finds the served agent that knows turn id (agent "" = look
// in every served agent, after syncing it with the stream).
func (s *Service) turnEngine(ctx context.Context, agent, id string) (*engine.Engine, string, error) {
	if id == "" {
		return nil, "", apiErr(http.StatusBadRequest, CodeInvalidRequest, "turn_id is required")
	}
	if err := checkKey("turn_id", events.AggTurn, id); err != nil {
		return nil, "", err
	}
	if agent != "" {
		e, a, err := s.engine(agent)
		return e, a, err
	}
	// With one agent served, a turn already folded is found without a
	// round trip (the step itself syncs); otherwise every engine is
	// brought up to the stream's end once and asked again. With several,
	// every engine is synced first: a turn of the same id that another
	// agent's fold has not reached yet must not be missed (the op would go
	// to the wrong agent's turn instead of answering ambiguous_turn).
	synced := false
	if len(s.cfg.Agents) > 1 {
		if err := s.syncAll(ctx); err != nil {
			return nil, "", err
		}
		synced = true
	}
	for ; ; synced = true {
		var found []string
		for _, a := range s.cfg.Agents {
			ok, err := s.hasTurn(ctx, a, id)
			if err != nil {
				return nil, "", err
			}
			if ok {
				found = append(found, a)
			}
		}
		switch {
		case len(found) == 1:
			return s.engines[found[0]], found[0], nil
		case len(found) > 1:
			return nil, "", apiErr(http.StatusConflict, CodeAmbiguousTurn,
				"turn %q exists in several served agents (%s): name one (the request's agent field; ?agent= on GET)", id, strings.Join(found, ", "))
		}
		if synced || len(s.cfg.Agents) == 0 {
			return nil, "", s.unknownTurn(ctx, "", id)
		}
		if err := s.syncAll(ctx); err != nil {
			return nil, "", err
		}
	}
}

// syncAll brings every served agent's engine up to the stream's end (one
// request for the end, then each engine's fold up to it).
func (s *Service) syncAll(ctx context.Context) error {
	if err := s.engines[s.cfg.Agents[0]].Sync(ctx); err != nil {
		return err
	}
	for _, a := range s.cfg.Agents[1:] {
		if err := s.engines[a].SyncTo(ctx, s.engines[s.cfg.Agents[0]].Position()); err != nil {
			return err
		}
	}
	return nil
}

func step(agent string, st *engine.Step) *TurnStep {
	return &TurnStep{TurnID: st.TurnID, Agent: agent, Next: nextJSON(st.Next), Replayed: st.Replayed}
}

func splitModel(s, field string) (events.ModelRef, error) {
	ref, err := engine.ParseModelRef(s)
	if err != nil {
		return events.ModelRef{}, badModel(s, field, "provider/model")
	}
	return ref, nil
}

var selectionSources = map[string]bool{string(policy.SourceUser): true, string(policy.SourceDefault): true, string(policy.SourceAuto): true,
	string(policy.SourceLegacy): true, string(policy.SourceCron): true}

// Begin opens a turn (POST /v1/turns). With a model, it is first selected
// for the session (source user by default), as `fledger run` does; with
// source cron it is the cron payload's model for this turn only. The
// selection is the engine's (engine.TurnRequest.Select): a begin of a
// turn id that exists records nothing, and one refused records nothing.
func (s *Service) Begin(ctx context.Context, r *BeginRequest) (*TurnStep, error) {
	if r.Session == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "session is required")
	}
	if err := checkKey("session", events.AggSession, r.Session); err != nil {
		return nil, err
	}
	if r.TurnID != "" {
		if err := checkKey("turn_id", events.AggTurn, r.TurnID); err != nil {
			return nil, err
		}
	}
	switch r.Chat {
	case "", engine.ChatDirect, engine.ChatGroup, engine.ChatChannel:
	default:
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "chat %q is not direct|group|channel", r.Chat)
	}
	if r.Source != "" && !selectionSources[r.Source] {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "source %q is not user|default|auto|legacy|cron", r.Source)
	}
	if r.Source != "" && r.Model == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "source is given without a model")
	}
	if r.Fallbacks != nil && policy.SelectionSource(r.Source) != policy.SourceCron {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "fallbacks are a cron payload's: they need a model with source cron")
	}
	if r.Fallbacks != nil && r.FallbacksOverride != nil {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "fallbacks and fallbacks_override both given: a cron payload's fallbacks are its override; send one")
	}
	override, err := modelList("fallbacks_override", r.FallbacksOverride)
	if err != nil {
		return nil, err
	}
	e, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	req := engine.TurnRequest{TurnID: r.TurnID, Session: r.Session, Agent: agent, Chat: r.Chat, FallbacksOverride: override}
	if r.Model != "" {
		ref, profile, err := modelSelection(r.Model, "model")
		if err != nil {
			return nil, err
		}
		if policy.SelectionSource(r.Source) == policy.SourceCron {
			if profile != "" {
				return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "a cron model (source cron) takes no @profile")
			}
			if req.Cron, err = cronPayload(ref, r.Fallbacks); err != nil {
				return nil, err
			}
		} else {
			req.Select = &engine.ModelSelection{Model: ref, Source: r.Source, Profile: profile}
		}
	}
	// Nothing is recorded (not even the model selection) for a turn that
	// cannot start, nor for a turn id another served agent has.
	v := req
	v.Agent = "" // a served agent's id was checked when it was served (New)
	if err := engine.ValidateTurnRequest(v); err != nil {
		return nil, err
	}
	if err := s.turnIDFree(ctx, agent, r.TurnID); err != nil {
		return nil, err
	}
	st, err := e.BeginTurn(ctx, req)
	if err != nil {
		return nil, err
	}
	return step(agent, st), nil
}

// turnIDFree refuses (409 turn_exists) a turn id that another served
// agent already has, so a turn op without ?agent= finds one turn. Two
// agents beginning the same id at the same moment are not serialised
// (their turns live under different subjects); a later op without
// ?agent= then answers ambiguous_turn.
func (s *Service) turnIDFree(ctx context.Context, agent, id string) error {
	if id == "" || len(s.cfg.Agents) < 2 {
		return nil
	}
	if err := s.syncAll(ctx); err != nil {
		return err
	}
	for _, a := range s.cfg.Agents {
		if a == agent {
			continue
		}
		ok, err := s.hasTurn(ctx, a, id)
		if err != nil {
			return err
		}
		if ok {
			return apiErr(http.StatusConflict, CodeTurnExists, "turn %q exists in agent %q: turn ids are unique across the agents served here", id, a)
		}
	}
	return nil
}

// Outcome reports an attempt's outcome (POST /v1/turns/{id}/outcomes).
func (s *Service) Outcome(ctx context.Context, r *OutcomeRequest) (*TurnStep, error) {
	if r.Attempt < 1 {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "attempt must be ≥ 1 (the attempt of the call action)")
	}
	if r.OK == (r.Error != nil) {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, `give exactly one of "ok": true and "error": {…}`)
	}
	if r.LatencyMs < 0 || r.LatencyMs > events.MaxExactInt {
		// Stored as a JSON number: above 2^53 − 1 a JavaScript reader would round it.
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "latency_ms must be from 0 to 9007199254740991 (2^53 − 1)")
	}
	if r.Error != nil && r.Error.Status < 0 {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "error.status must be ≥ 0")
	}
	e, agent, err := s.turnEngine(ctx, r.Agent, r.TurnID)
	if err != nil {
		return nil, err
	}
	rep := engine.AttemptReport{Attempt: r.Attempt, OK: r.OK, LatencyMs: r.LatencyMs}
	if !r.OK {
		var callErr error = r.Error
		if r.OutputStarted || r.ToolStarted {
			callErr = &engine.ReplayUnsafeError{Err: callErr, OutputStarted: r.OutputStarted, ToolStarted: r.ToolStarted}
		}
		if r.ToolBatchSettled {
			callErr = &engine.ToolBatchSettledError{Err: callErr}
		}
		rep.Err = callErr
	}
	st, err := e.ReportOutcome(ctx, r.TurnID, rep)
	if err != nil {
		return nil, s.turnOpError(ctx, agent, r.TurnID, err)
	}
	out := step(agent, st)
	if r.Error != nil {
		out.IgnoredKeys = r.Error.IgnoredKeys()
	}
	return out, nil
}

// Resume continues a turn after a wait (POST /v1/turns/{id}/resume). A
// resume up to ResumeGrace early is held until the wait ends.
func (s *Service) Resume(ctx context.Context, r *TurnRef) (*TurnStep, error) {
	e, agent, err := s.turnEngine(ctx, r.Agent, r.TurnID)
	if err != nil {
		return nil, err
	}
	st, err := e.ResumeTurn(ctx, r.TurnID)
	var wait *engine.WaitNotOverError
	if errors.As(err, &wait) && s.cfg.ResumeGrace >= 0 && time.Duration(wait.RemainingMs)*time.Millisecond <= s.cfg.ResumeGrace {
		if err := e.Clock().Sleep(ctx, time.Duration(wait.RemainingMs)*time.Millisecond); err != nil {
			return nil, err
		}
		st, err = e.ResumeTurn(ctx, r.TurnID)
	}
	if err != nil {
		return nil, s.turnOpError(ctx, agent, r.TurnID, err)
	}
	return step(agent, st), nil
}

// Turn reads a turn's state and current step (GET /v1/turns/{id}).
func (s *Service) Turn(ctx context.Context, r *TurnRef) (*TurnView, error) {
	e, agent, err := s.turnEngine(ctx, r.Agent, r.TurnID)
	if err != nil {
		return nil, err
	}
	st, err := e.CurrentStep(ctx, r.TurnID)
	if err != nil {
		return nil, s.turnOpError(ctx, agent, r.TurnID, err)
	}
	t, _, err := e.LookupTurn(ctx, r.TurnID)
	if err != nil {
		return nil, err
	}
	return &TurnView{TurnID: r.TurnID, Agent: agent, Session: t.Session, Phase: string(t.Phase), Attempts: t.Attempts, Next: nextJSON(st.Next)}, nil
}

func (s *Service) sessionEngine(ctx context.Context, agent, session string) (*engine.Engine, string, error) {
	if session == "" {
		return nil, "", apiErr(http.StatusBadRequest, CodeInvalidRequest, "session is required")
	}
	if err := checkKey("session", events.AggSession, session); err != nil {
		return nil, "", err
	}
	e, a, err := s.engine(agent)
	if err != nil {
		return nil, "", err
	}
	return e, a, e.Sync(ctx)
}

func sessionResult(agent, session string, e *engine.Engine, evs []events.Event) *SessionCommandResult {
	out := &SessionCommandResult{Session: sessionView(agent, session, e.Session(session)), Events: []string{}}
	for _, ev := range evs {
		out.Events = append(out.Events, ev.Type)
	}
	return out
}

func sessionView(agent, key string, s policy.SessionState) SessionView {
	v := SessionView{Agent: agent, Session: key, Source: string(s.Source), Pin: s.Pin, PinProvider: s.PinProvider, PinSource: string(s.PinSource),
		CompactionCount: s.CompactionCount, LastReset: s.LastReset}
	if s.Model != (policy.ModelRef{}) {
		v.Model = s.Model.String()
	}
	if s.Origin != (policy.ModelRef{}) {
		v.Origin = s.Origin.String()
	}
	v.NoticeActive, v.NoticeSelected = s.Notice.Active, s.Notice.Selected
	return v
}

// SelectModel is `/model` (POST /v1/sessions/{agent}/{session}/model);
// model "default" clears the override.
func (s *Service) SelectModel(ctx context.Context, r *ModelRequest) (*SessionCommandResult, error) {
	e, agent, err := s.sessionEngine(ctx, r.Agent, r.Session)
	if err != nil {
		return nil, err
	}
	if r.Model == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, `model is required ("provider/model" or "default")`)
	}
	// A cron model is one turn's (POST /v1/turns with source cron), never
	// the session's: stored, it would make every later turn a cron run.
	if err := engine.CheckSessionSource(r.Source); err != nil {
		return nil, err
	}
	var evs []events.Event
	if r.Model == "default" {
		if r.Origin != "" || r.Profile != "" {
			return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "model default takes no origin or profile")
		}
		evs, err = e.ClearModel(ctx, r.Session, agent)
	} else {
		ref, profile, err := modelSelection(r.Model, "model")
		if err != nil {
			return nil, err
		}
		switch {
		case profile == "":
			profile = r.Profile
		case r.Profile != "" && r.Profile != profile:
			return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "model %q names profile %q but profile is %q; give one of them", r.Model, profile, r.Profile)
		}
		var origin *events.ModelRef
		if r.Origin != "" {
			o, err := splitModel(r.Origin, "origin")
			if err != nil {
				return nil, err
			}
			origin = &o
		}
		evs, err = e.SelectModel(ctx, r.Session, ref, r.Source, origin, profile)
		if err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return sessionResult(agent, r.Session, e, evs), nil
}

// Reset is `/new` or `/reset` (POST …/reset).
func (s *Service) Reset(ctx context.Context, r *ResetRequest) (*SessionCommandResult, error) {
	e, agent, err := s.sessionEngine(ctx, r.Agent, r.Session)
	if err != nil {
		return nil, err
	}
	kind := r.Kind
	if kind == "" {
		kind = "reset"
	}
	if kind != "new" && kind != "reset" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "kind %q is not new|reset", r.Kind)
	}
	evs, err := e.Reset(ctx, r.Session, kind)
	if err != nil {
		return nil, err
	}
	return sessionResult(agent, r.Session, e, evs), nil
}

// Compaction records a completed compaction (POST …/compaction): an
// automatic pin is cleared unless autoPinSurvivesCompaction.
func (s *Service) Compaction(ctx context.Context, r *SessionRef) (*SessionCommandResult, error) {
	e, agent, err := s.sessionEngine(ctx, r.Agent, r.Session)
	if err != nil {
		return nil, err
	}
	evs, err := e.CompleteCompaction(ctx, r.Session)
	if err != nil {
		return nil, err
	}
	return sessionResult(agent, r.Session, e, evs), nil
}

// Pin pins an auth profile (POST …/pin).
func (s *Service) Pin(ctx context.Context, r *PinRequest) (*SessionCommandResult, error) {
	e, agent, err := s.sessionEngine(ctx, r.Agent, r.Session)
	if err != nil {
		return nil, err
	}
	if r.Profile == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "profile is required")
	}
	if r.Source != "" && r.Source != string(policy.PinUser) && r.Source != string(policy.PinAuto) {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "source %q is not user|auto", r.Source)
	}
	evs, err := e.PinProfile(ctx, r.Session, r.Profile, r.Source)
	if err != nil {
		return nil, err
	}
	return sessionResult(agent, r.Session, e, evs), nil
}

// Session reads a session's selection (GET /v1/sessions/{agent}/{session}).
func (s *Service) Session(ctx context.Context, r *SessionRef) (*SessionView, error) {
	e, agent, err := s.sessionEngine(ctx, r.Agent, r.Session)
	if err != nil {
		return nil, err
	}
	v := sessionView(agent, r.Session, e.Session(r.Session))
	return &v, nil
}

// Profiles reads every profile's usageStats (GET /v1/profiles): the
// configured profiles and any with recorded state, sorted by id, as of
// the stream's last sequence.
func (s *Service) Profiles(ctx context.Context, r *ProfilesRequest) (*ProfilesView, error) {
	e, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	now := events.Millis(e.Clock().Now())
	ids := map[string]string{}
	for _, id := range e.Profiles() {
		ids[id] = ""
	}
	if cfg, ok := e.Config(); ok {
		for _, p := range cfg.Profiles {
			ids[p.ID] = p.Provider
		}
	}
	out := &ProfilesView{Agent: agent, Now: now, Profiles: []ProfileView{}}
	for id, prov := range ids {
		p := e.Profile(id)
		if prov == "" {
			prov = p.Provider
		}
		out.Profiles = append(out.Profiles, ProfileView{ID: id, Provider: prov, LastUsed: p.LastUsed, ErrorCount: p.ErrorCount,
			FailureCounts: p.FailureCounts, LastFailureAt: p.LastFailureAt, CooldownUntil: p.CooldownUntil, CooldownReason: p.CooldownReason,
			CooldownModel: p.CooldownModel, DisabledUntil: p.DisabledUntil, DisabledReason: p.DisabledReason,
			BlockedUntil: p.BlockedUntil, BlockedReason: p.BlockedReason, BlockedSource: p.BlockedSource, BlockedModel: p.BlockedModel,
			Usable: p.UnusableUntil() <= now})
	}
	sort.Slice(out.Profiles, func(i, j int) bool { return out.Profiles[i].ID < out.Profiles[j].ID })
	return out, nil
}

// Decisions reads a page of an agent's model_fallback_decision records
// (GET /v1/decisions), from the projections caught up to the stream first:
// the records at or after stream sequence FromSeq (and, with Since, decided
// at or after that time), whole commits only, up to Limit.
func (s *Service) Decisions(ctx context.Context, r *DecisionsRequest) (*DecisionsView, error) {
	if s.proj == nil {
		return nil, apiErr(http.StatusServiceUnavailable, CodeUnavailable, "this server keeps no projections")
	}
	_, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	if r.FromSeq > events.MaxExactInt {
		// next_from_seq is read back into from_seq: above 2^53 − 1 a
		// JavaScript reader would round it.
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "from_seq must be at most 9007199254740991 (2^53 − 1)")
	}
	limit := r.Limit
	switch {
	case limit == 0:
		limit = DefaultDecisionsLimit
	case limit < 0 || limit > MaxDecisionsLimit:
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "limit must be in 1..%d", MaxDecisionsLimit)
	}
	since, until, err := parseRange(r.Since, r.Until)
	if err != nil {
		return nil, err
	}
	if err := checkDecisionFilters(r); err != nil {
		return nil, err
	}
	cp, err := s.proj.catchUp(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.proj.db.Decisions(ctx, projections.DecisionFilter{Agent: agent, Since: since, Until: until, Reason: r.Reason,
		CandidateProvider: r.Provider, Decision: r.Outcome})
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(all), func(i int) bool { return all[i].Seq >= r.FromSeq })
	out := &DecisionsView{Decisions: []projections.DecisionRecord{}, NextFromSeq: max(r.FromSeq, cp+1), Checkpoint: cp}
	for i < len(all) {
		j := i + 1
		for j < len(all) && all[j].Seq == all[i].Seq {
			j++
		}
		if len(out.Decisions) > 0 && len(out.Decisions)+j-i > limit {
			out.NextFromSeq = all[i].Seq
			break
		}
		out.Decisions = append(out.Decisions, all[i:j]...)
		i = j
	}
	return out, nil
}

// parseTime reads the RFC 3339 time of query parameter or field name ("" =
// none). A bare number is refused naming from_seq, where a stream
// sequence goes.
func parseTime(name, x string) (time.Time, error) {
	if x == "" {
		return time.Time{}, nil
	}
	// RFC 3339 allows "t" and "z" in lower case; Go's layout does not.
	t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(x))
	if err == nil && t.Before(time.Unix(0, 0)) {
		// Ledger times are Unix milliseconds: an earlier bound is a
		// mistake (Go's zero time, 0001-01-01, read as "no bound" would
		// hide it).
		return time.Time{}, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is before 1970-01-01T00:00:00Z; ledger times are Unix milliseconds", name, x)
	}
	if err == nil {
		return t, nil
	}
	if _, nerr := strconv.ParseUint(x, 10, 64); nerr == nil {
		return time.Time{}, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is a number: %s is an RFC 3339 time (e.g. 2026-01-02T15:04:05Z); a stream sequence goes in from_seq", name, x, name)
	}
	if plus := strings.ReplaceAll(x, " ", "+"); plus != x {
		if _, perr := time.Parse(time.RFC3339Nano, strings.ToUpper(plus)); perr == nil {
			// An offset's + sent unencoded in a URL query reads as a space.
			return time.Time{}, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is not an RFC 3339 time: it has a space where a + offset would be (%s); in a URL query a + reads as a space: send + as %%2B (%s)",
				name, x, plus, strings.ReplaceAll(plus, "+", "%2B"))
		}
	}
	return time.Time{}, apiErr(http.StatusBadRequest, CodeInvalidRequest, "%s %q is not an RFC 3339 time (e.g. 2026-01-02T15:04:05Z)", name, x)
}

// SetAuthOrder is `models auth order set|clear` (POST
// /v1/agents/{agent}/auth/order/{provider}).
func (s *Service) SetAuthOrder(ctx context.Context, r *AuthOrderRequest) (*AuthOrderResult, error) {
	if r.Provider == "" {
		return nil, apiErr(http.StatusBadRequest, CodeInvalidRequest, "provider is required")
	}
	e, agent, err := s.engine(r.Agent)
	if err != nil {
		return nil, err
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	by := r.By
	if by == "" {
		by = "api"
	}
	evs, err := e.SetAuthOrder(ctx, r.Provider, r.Profiles, by)
	if err != nil {
		return nil, err
	}
	out := &AuthOrderResult{Agent: agent, Provider: r.Provider, Profiles: e.AuthOrder(r.Provider), Events: []string{}}
	if out.Profiles == nil {
		out.Profiles = []string{}
	}
	for _, ev := range evs {
		out.Events = append(out.Events, ev.Type)
	}
	return out, nil
}

// hasTurn reports whether agent's engine knows turn id, an evicted
// finished turn included (engine.LookupTurn).
func (s *Service) hasTurn(ctx context.Context, agent, id string) (bool, error) {
	_, ok, err := s.engines[agent].LookupTurn(ctx, id)
	return ok, err
}
