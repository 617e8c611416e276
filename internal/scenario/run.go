package scenario

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// Options tune a run.
type Options struct {
	// Agent is the stream namespace (the events' agent id). "" = a fresh
	// one per run, "scn-<name>-<8 hex>", so state left on the stream by an
	// earlier run (cooldowns, pins, notice state) never changes this run's
	// results. A fixed Agent continues from that agent's state.
	Agent string
	// Realtime sleeps call latencies and waits instead of only advancing
	// the virtual clock (gaps between steps are always skipped).
	Realtime bool
}

// Report is what a run did, step by step.
type Report struct {
	Scenario    string          `json:"scenario"`
	Description string          `json:"description,omitempty"`
	Source      string          `json:"source,omitempty"`
	Agent       string          `json:"agent"`
	Start       time.Time       `json:"start"`
	ConfigHash  string          `json:"config_hash"`
	Steps       []StepReport    `json:"steps"`
	Profiles    []ProfileReport `json:"profiles"`
	// Sessions are the end-of-run states of the sessions the script names.
	Sessions []SessionReport `json:"sessions"`
	// Stopped is the step the run could not run, when it stopped there
	// (the steps after it did not run).
	Stopped *StopReport `json:"stopped,omitempty"`
	// Mismatches are the failed expectations (filled by Check).
	Mismatches []Mismatch `json:"mismatches,omitempty"`
	Checked    bool       `json:"checked"`

	start time.Time
}

// StopReport is where and why a run stopped: the step (script[Step]),
// its offset and the error.
type StopReport struct {
	Step   int    `json:"step"`
	Offset string `json:"offset"`
	Error  string `json:"error"`
}

// StepReport is one script step's result.
type StepReport struct {
	Index int       `json:"index"`
	At    time.Time `json:"at"`
	// Offset is At − Start, e.g. "+1m30s".
	Offset string `json:"offset"`
	// Kind is turn | command.
	Kind    string         `json:"kind"`
	Command *CommandReport `json:"command,omitempty"`
	Turn    *TurnReport    `json:"turn,omitempty"`
}

// CommandReport is a session command (or an agent command such as
// auth_order, with no session) and the events it recorded.
type CommandReport struct {
	Text    string   `json:"text"`
	Session string   `json:"session,omitempty"`
	Events  []string `json:"events"`
	Error   string   `json:"error,omitempty"`
}

// TurnReport is one turn's result.
type TurnReport struct {
	ID         string   `json:"id"`
	Session    string   `json:"session"`
	Chat       string   `json:"chat"`
	Requested  string   `json:"requested"`
	Source     string   `json:"selection_source"`
	Chain      []string `json:"chain"`
	Outcome    string   `json:"outcome"`
	AnsweredBy string   `json:"answered_by,omitempty"`
	Profile    string   `json:"profile,omitempty"`
	Attempts   int      `json:"attempts"`
	DurationMs int64    `json:"duration_ms"`
	// Lines are the turn's steps in words, in order.
	Lines   []Line         `json:"lines"`
	Notices []NoticeReport `json:"notices"`
	// Summary is the exhaustion summary the user sees; SoonestCooldown the
	// model-aware soonest cooldown expiry.
	Summary         string     `json:"summary,omitempty"`
	SoonestCooldown *time.Time `json:"soonest_cooldown_expiry,omitempty"`
	Disposition     string     `json:"disposition,omitempty"`
	Reason          string     `json:"reason,omitempty"`
	Message         string     `json:"message,omitempty"`
	// SwitchedTo is the model a live switch outside the chain handed the
	// turn back to (outcome switched).
	SwitchedTo string `json:"switched_to,omitempty"`
	// Tried lists every attempt in order; Skips every skipped candidate
	// ("provider/model: <text>"); AnsweredAt is when the answer arrived.
	Tried      []AttemptReport `json:"tried"`
	Skips      []string        `json:"skips,omitempty"`
	AnsweredAt *time.Time      `json:"answered_at,omitempty"`
	// SessionState is the turn's session right after the turn.
	SessionState *SessionReport `json:"session_state,omitempty"`
	// Unused lists scripted responses no attempt used.
	Unused []string `json:"unused_responses,omitempty"`
	// types are the types of the events the turn appended, in order.
	types []string
	// Profiles are the usageStats right after the turn.
	Profiles map[string]ProfileReport `json:"-"`
}

// AttemptReport is one provider call of a turn: its number, candidate
// ("provider/model"), auth profile ("" = the provider's default
// credentials), kind (first | retry | rotation | fallback | probe |
// chain_retry | live_switch | transport_recovery) and start offset.
type AttemptReport struct {
	Attempt   int    `json:"attempt"`
	Candidate string `json:"candidate"`
	Profile   string `json:"profile,omitempty"`
	Kind      string `json:"kind"`
	Offset    string `json:"offset"`
}

// Line is one step of a turn in words.
type Line struct {
	Offset string `json:"offset"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
}

// NoticeReport is a notice: Delivered false = recorded, not shown.
type NoticeReport struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

// ProfileReport is a profile's usageStats (OpenClaw names; times as
// offsets from the start).
type ProfileReport struct {
	ID             string         `json:"id"`
	ErrorCount     int            `json:"errorCount"`
	FailureCounts  map[string]int `json:"failureCounts,omitempty"`
	CooldownUntil  string         `json:"cooldownUntil,omitempty"`
	CooldownReason string         `json:"cooldownReason,omitempty"`
	CooldownModel  string         `json:"cooldownModel,omitempty"`
	DisabledUntil  string         `json:"disabledUntil,omitempty"`
	DisabledReason string         `json:"disabledReason,omitempty"`
	BlockedUntil   string         `json:"blockedUntil,omitempty"`
	BlockedReason  string         `json:"blockedReason,omitempty"`
	BlockedSource  string         `json:"blockedSource,omitempty"`
	BlockedModel   string         `json:"blockedModel,omitempty"`
	LastUsed       string         `json:"lastUsed,omitempty"`

	state policy.ProfileState
}

// ScriptError reports a step the script could not run (no response for an
// attempt, a refused command).
type ScriptError struct {
	Step int
	Err  error
}

func (e *ScriptError) Error() string { return fmt.Sprintf("script[%d]: %v", e.Step, e.Err) }

// Unwrap returns the cause.
func (e *ScriptError) Unwrap() error { return e.Err }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Namespace returns a fresh stream namespace (agent id) for a run of name.
func Namespace(name string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := strings.Trim(unsafeName.ReplaceAllString(name, "-"), "-")
	if len(n) > 48 {
		n = n[:48]
	}
	return "scn-" + n + "-" + hex.EncodeToString(b[:])
}

// Run plays sc on st: it applies the scenario's config to a fresh
// namespace (see [Options]), then runs each step at its offset on a
// virtual clock with scripted provider answers. It returns the report of
// every step run; a *ScriptError (also with the partial report) when the
// script cannot go on.
func Run(ctx context.Context, st events.Store, sc *Scenario, opt Options) (*Report, error) {
	r, err := start(ctx, st, sc, opt)
	if err != nil {
		return nil, err
	}
	defer func() { r.eng.Close() }()
	rep := r.rep
	for i := range sc.Script {
		step := &sc.Script[i]
		r.clock.AdvanceTo(sc.Start.Add(step.Offset))
		sr := StepReport{Index: i, At: r.clock.Now(), Offset: rep.offset(events.Millis(r.clock.Now()))}
		var err error
		if step.Command != nil {
			sr.Kind = "command"
			sr.Command, err = r.command(ctx, step.Command)
		} else {
			sr.Kind = "turn"
			sr.Turn, err = r.turn(ctx, step.Turn, sc.Default)
		}
		rep.Steps = append(rep.Steps, sr)
		if err != nil {
			r.finish()
			se := &ScriptError{Step: i, Err: err}
			rep.Stopped = &StopReport{Step: i, Offset: sr.Offset, Error: se.Error()}
			return rep, se
		}
	}
	r.finish()
	return rep, nil
}

// runner plays one scenario: the engine it drives, which a restart step
// replaces by a new one on the same store and namespace (with the same
// options), the clock and the report.
type runner struct {
	st    events.Store
	sc    *Scenario
	agent string
	opts  []engine.Option
	clock *Clock
	eng   *engine.Engine
	rep   *Report
}

// start opens the engine on a (fresh) namespace and applies the
// scenario's config.
func start(ctx context.Context, st events.Store, sc *Scenario, opt Options) (*runner, error) {
	agent := opt.Agent
	if agent == "" {
		agent = Namespace(sc.Name)
	}
	clock := NewClock(sc.Start, opt.Realtime)
	seeds := func(turnID string) uint64 {
		h := fnv.New64a()
		h.Write([]byte(sc.Name + "\x00" + turnID))
		return h.Sum64()
	}
	r := &runner{st: st, sc: sc, agent: agent, clock: clock,
		opts: []engine.Option{engine.WithClock(clock), engine.WithSeeds(seeds)}}
	eng, err := engine.New(ctx, st, agent, r.opts...)
	if err != nil {
		return nil, err
	}
	if _, _, err := eng.ApplyConfig(ctx, ConfigSource(sc), sc.Loaded); err != nil {
		eng.Close()
		return nil, err
	}
	r.eng = eng
	r.rep = &Report{Scenario: sc.Name, Description: sc.Description, Source: sc.Source, Agent: agent,
		Start: sc.Start.UTC(), ConfigHash: sc.Loaded.Hash, start: sc.Start.UTC()}
	return r, nil
}

// ConfigSource is the ConfigApplied source of every config a run of sc
// applies ("scenario:<name>").
func ConfigSource(sc *Scenario) string { return "scenario:" + sc.Name }

// finish records the end-of-run state: every configured profile's
// usageStats and the state of every session the script names.
func (r *runner) finish() {
	r.rep.Profiles = r.rep.profiles(r.eng, r.sc)
	r.rep.Sessions = sessionReports(r.eng, r.sc)
}

// turn runs a scripted turn through engine.RunTurn, answered by its
// responses (then def), and reports it with the state it left.
func (r *runner) turn(ctx context.Context, t *Turn, def *Response) (*TurnReport, error) {
	eng, sc, rep := r.eng, r.sc, r.rep
	req, err := r.request(ctx, t)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	caller := newScriptCaller(t, def, r.clock, cancel)
	during := map[int][]Line{}
	caller.during = func(ctx context.Context, attempt int, c *Command) error {
		cr, err := r.command(ctx, c)
		if err == nil {
			during[attempt] = append(during[attempt], Line{Offset: rep.offset(events.Millis(r.clock.Now())), Kind: "command",
				Text: fmt.Sprintf("   during attempt #%d: %s → %s", attempt, cr.Text, strings.Join(cr.Events, ", "))})
		}
		return err
	}
	res, err := eng.RunTurn(tctx, req, caller)
	if caller.missing != nil {
		err = caller.missing
	}
	if caller.failed != nil {
		err = caller.failed
	}
	var ex *engine.ExhaustedError
	var stop *engine.StoppedError
	var sw *engine.SwitchError
	if err != nil && !errors.As(err, &ex) && !errors.As(err, &stop) && !errors.As(err, &sw) && res == nil {
		return nil, err
	}
	tr := rep.turnReport(res)
	tr.Lines = mergeLines(tr.Lines, during)
	tr.Unused = caller.unused()
	switch {
	case sw != nil:
		tr.SwitchedTo, tr.Message = sw.Model.String(), sw.Message
	case ex != nil:
		tr.Summary = ex.Summary
		if ex.SoonestCooldownExpiry > 0 {
			at := events.FromMillis(ex.SoonestCooldownExpiry)
			tr.SoonestCooldown = &at
		}
	case stop != nil:
		tr.Disposition, tr.Reason, tr.Message = stop.Disposition, stop.Reason, stop.Message
	}
	tr.Profiles = map[string]ProfileReport{}
	for _, p := range sc.Loaded.Policy.Profiles {
		tr.Profiles[p.ID] = rep.profile(p.ID, eng.Profile(p.ID))
	}
	sr := sessionReport(t.Session, eng.Session(t.Session))
	tr.SessionState = &sr
	if ex != nil || stop != nil || sw != nil {
		err = nil
	}
	return tr, err
}

// mergeLines puts the lines of commands that ran during a turn's
// attempts (by attempt number) after that attempt's line.
func mergeLines(turn []Line, during map[int][]Line) []Line {
	if len(during) == 0 {
		return turn
	}
	out := make([]Line, 0, len(turn)+len(during))
	n := 0
	for _, l := range turn {
		out = append(out, l)
		if l.Kind == "attempt" {
			n++
			out = append(out, during[n]...)
		}
	}
	return out
}

// request builds the turn's engine.TurnRequest as `fledger serve` does
// for POST /v1/turns: a model with source cron is this turn's cron payload
// (with payload.fallbacks when the turn has them) and stores nothing; any
// other source is selected on the session first.
func (r *runner) request(ctx context.Context, t *Turn) (engine.TurnRequest, error) {
	req := engine.TurnRequest{TurnID: t.ID, Session: t.Session, Agent: t.Agent, Chat: t.Chat}
	if t.FallbacksOverride != nil {
		list := []policy.ModelRef{}
		for _, f := range *t.FallbacksOverride {
			list = append(list, modelRef(f))
		}
		req.FallbacksOverride = &list
	}
	if t.Model == "" {
		return req, nil
	}
	ref := modelRef(t.Model)
	if policy.SelectionSource(t.Source) == policy.SourceCron {
		req.Cron = &policy.CronPayload{Model: ref}
		if t.Fallbacks != nil {
			req.Cron.HasFallbacks = true
			for _, f := range *t.Fallbacks {
				req.Cron.Fallbacks = append(req.Cron.Fallbacks, modelRef(f))
			}
		}
		return req, nil
	}
	src := t.Source
	if src == "" {
		src = string(policy.SourceUser)
	}
	if _, err := r.eng.SelectModel(ctx, t.Session, ref, src, nil, ""); err != nil {
		return req, fmt.Errorf("turn %s: select %s: %w", t.ID, t.Model, err)
	}
	return req, nil
}

func (rep *Report) profiles(eng *engine.Engine, sc *Scenario) []ProfileReport {
	var out []ProfileReport
	for _, p := range sc.Loaded.Policy.Profiles {
		out = append(out, rep.profile(p.ID, eng.Profile(p.ID)))
	}
	return out
}

func (rep *Report) profile(id string, s policy.ProfileState) ProfileReport {
	return ProfileReport{ID: id, ErrorCount: s.ErrorCount, FailureCounts: s.FailureCounts,
		CooldownUntil: rep.offset(s.CooldownUntil), CooldownReason: s.CooldownReason, CooldownModel: s.CooldownModel,
		DisabledUntil: rep.offset(s.DisabledUntil), DisabledReason: s.DisabledReason,
		BlockedUntil: rep.offset(s.BlockedUntil), BlockedReason: s.BlockedReason, BlockedSource: s.BlockedSource, BlockedModel: s.BlockedModel,
		LastUsed: rep.offset(s.LastUsed), state: s}
}

// offset renders Unix ms as "+<duration>" from the start ("" for 0).
func (rep *Report) offset(ms int64) string {
	if ms == 0 {
		return ""
	}
	d := events.FromMillis(ms).Sub(rep.start)
	if d < 0 {
		return "-" + d.Abs().String()
	}
	return "+" + d.String()
}
