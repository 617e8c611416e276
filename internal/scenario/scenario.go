// Package scenario runs scripted failover scenarios on the turn engine:
// a scenario file (YAML or JSON, schemas/scenario.v1.json) holds a config,
// a start time and a script of turns and session commands at offsets; the
// runner answers each provider call from the script on a virtual clock,
// records everything through engine, renders what happened and
// checks it against the scenario's expectations.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
)

// MaxFileBytes bounds a scenario file (4 MiB).
const MaxFileBytes = 4 << 20

// Scenario is a parsed, validated scenario file.
type Scenario struct {
	// Name identifies the scenario (also its run namespace prefix).
	Name string `json:"name"`
	// Description says what it demonstrates and where its errors come from.
	Description string `json:"description,omitempty"`
	// Start is the virtual time the script starts at.
	Start time.Time `json:"start"`
	// Config is the failover config (the config file format).
	Config json.RawMessage `json:"config"`
	// Default answers attempts no scripted response matches.
	Default *Response `json:"default,omitempty"`
	// Script is the list of steps, in order.
	Script []Step `json:"script"`
	// Expect holds end-of-run expectations.
	Expect *Expect `json:"expect,omitempty"`

	// Loaded is the parsed config; Source the file the scenario came from.
	Loaded *config.Loaded `json:"-"`
	Source string         `json:"-"`
}

// Step is one script entry: a turn or a session command at an offset
// from Start.
type Step struct {
	// At is "+<duration>" from Start ("+0s", "+45s", "+2m30s").
	At      string        `json:"at"`
	Offset  time.Duration `json:"-"`
	Turn    *Turn         `json:"turn,omitempty"`
	Command *Command      `json:"command,omitempty"`
}

// Turn is one scripted turn.
type Turn struct {
	// ID is the turn id (default "t<step number>").
	ID      string `json:"id,omitempty"`
	Session string `json:"session"`
	// Agent is the OpenClaw agent id (agents.entries), "" = defaults.
	Agent string `json:"agent,omitempty"`
	// Chat is direct | group | channel (default direct).
	Chat string `json:"chat,omitempty"`
	// Model, when set, is selected on the session before the turn with
	// Source (default user; cron makes it this turn's cron payload and
	// stores nothing).
	Model  string `json:"model,omitempty"`
	Source string `json:"source,omitempty"`
	// Fallbacks is a cron payload's payload.fallbacks (source cron only):
	// the run's fallbacksOverride, the chain being Model then these, with
	// no configured primary appended; an empty list is a strict cron run.
	// nil (absent) = the configured fallbacks.
	Fallbacks *[]string `json:"fallbacks,omitempty"`
	// FallbacksOverride is the caller's fallbacksOverride for the turn,
	// any source (seed 000 "Candidate chain rules": the chain is exactly
	// the selected model then these, no configured primary appended; []
	// is strict), as POST /v1/turns fallbacks_override. Not together with
	// Fallbacks.
	FallbacksOverride *[]string `json:"fallbacks_override,omitempty"`
	// Responses answer the turn's attempts: each attempt takes the first
	// unused response matching its candidate (and profile, when given).
	Responses []Response `json:"responses,omitempty"`
	// Expect is what the turn must do (checked with --check).
	Expect *TurnExpect `json:"expect,omitempty"`

	// warmUp is the profile a use step's warm-up turn seeds ("" for a
	// scripted turn): its one response answers that profile only.
	warmUp string
}

// Command is a session command: do is model (`/model p/m[@profile]`, with
// source), model_default (`/model default`), pin (profile, source auto or
// user), new (`/new`), reset (`/reset`), sessions_reset (the gateway's
// sessions.reset), compaction (a completed compaction) or auth_order
// (`models auth order set --provider <provider> <profiles…>`: the agent's
// stored auth-profile order; no session; an empty profiles list clears
// it). Three steps act on the gateway instead of a session: use (seed a
// profile's lastUsed with a one-call warm-up turn, see seed.go),
// remove_profile (a config change without that profile) and restart (a new
// engine on the same ledger).
type Command struct {
	Do      string `json:"do"`
	Session string `json:"session,omitempty"`
	Model   string `json:"model,omitempty"`
	Source  string `json:"source,omitempty"`
	Profile string `json:"profile,omitempty"`
	Agent   string `json:"agent,omitempty"`
	// Origin is the configured model a stored auto override fell back
	// from (do: model with source auto, as imported session state holds
	// it): every failover.autoOverrideProbeIntervalMs the origin is tried
	// first, and its success clears the override.
	Origin string `json:"origin,omitempty"`
	// Provider and Profiles are the stored order of do: auth_order.
	Provider string   `json:"provider,omitempty"`
	Profiles []string `json:"profiles,omitempty"`

	// turnID is the warm-up turn of do: use; config the config in force
	// after do: remove_profile (both set by Parse).
	turnID string
	config *config.Loaded
}

// TurnID is the id of a use step's warm-up turn ("t<step number>").
func (c *Command) TurnID() string { return c.turnID }

// Config is the config a remove_profile step leaves in force.
func (c *Command) Config() *config.Loaded { return c.config }

// Response is one scripted provider answer.
type Response struct {
	// Candidate is "provider/model"; Profile, when set, restricts the
	// response to that auth profile.
	Candidate string `json:"candidate,omitempty"`
	Profile   string `json:"profile,omitempty"`
	// OK answers with Text; otherwise Error is the provider error.
	OK   bool   `json:"ok,omitempty"`
	Text string `json:"text,omitempty"`
	// Error has the classify.ProviderError fields: status, code, type,
	// message, body, headers (and name, cause).
	Error *classify.ProviderError `json:"error,omitempty"`
	// Vector names the real provider error (fixtures/vectors RE-* id) the
	// error is taken from.
	Vector string `json:"vector,omitempty"`
	// LatencyMs is how long the call takes on the scenario clock.
	LatencyMs int64 `json:"latency_ms,omitempty"`
	// Repeat answers that many attempts (default 1).
	Repeat int `json:"repeat,omitempty"`
	// OutputStarted / ToolStarted (errors only): assistant output or a tool
	// call had started before the error, as a gateway reports them
	// (engine.ReplayUnsafeError): the attempt is never retried, and the
	// whole-chain overload retry is off for the rest of the turn.
	OutputStarted bool `json:"output_started,omitempty"`
	ToolStarted   bool `json:"tool_started,omitempty"`
	// ToolBatchSettled (errors only): the call continued the transcript
	// after a settled tool batch (engine.ToolBatchSettledError): a
	// transport failure before any output is then continued on the same
	// call, up to twice a turn (transport_recovery, rule revision 3).
	ToolBatchSettled bool `json:"tool_batch_settled,omitempty"`
	// During is a session command that arrives while this attempt is in
	// flight (at the end of its latency, before its outcome is
	// reported): a `/model` mid-turn marks a pending live switch the turn
	// takes at its next step. Run on the response's first use only.
	During *Command `json:"during,omitempty"`
}

// Problem is one thing wrong with a scenario file, at a path such as
// script[2].turn.responses[0].candidate.
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// ErrInvalid is wrapped by every validation failure.
var ErrInvalid = errors.New("invalid scenario")

// ValidationError lists every problem found in a scenario file.
type ValidationError struct {
	Source   string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: invalid scenario", e.Source)
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// LoadFile reads and parses a scenario file (YAML or JSON).
func LoadFile(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scenario: read %s: %w", path, err)
	}
	return Parse(data, path)
}

// Parse parses scenario text; source names it in errors. Unknown keys are
// errors (a misspelt expectation would otherwise pass silently).
func Parse(data []byte, source string) (*Scenario, error) {
	bad := func(path, format string, a ...any) error {
		return &ValidationError{Source: source, Problems: []Problem{{Path: path, Msg: fmt.Sprintf(format, a...)}}}
	}
	if len(data) > MaxFileBytes {
		return nil, bad("", "file is larger than %d bytes", MaxFileBytes)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, bad("", "not valid YAML or JSON: %v", err)
	}
	var top struct {
		// Schema is the JSON Schema an editor validates the file against
		// (schemas/scenario.v1.json); ignored.
		Schema      string            `json:"$schema"`
		Name        string            `json:"name"`
		Description string            `json:"description"`
		Start       string            `json:"start"`
		Config      json.RawMessage   `json:"config"`
		Default     json.RawMessage   `json:"default"`
		Script      []json.RawMessage `json:"script"`
		Expect      json.RawMessage   `json:"expect"`
	}
	v := &validator{source: source}
	if !v.decode("", js, &top) {
		return nil, &ValidationError{Source: source, Problems: v.problems}
	}
	sc := &Scenario{Name: top.Name, Description: top.Description, Config: top.Config, Source: source}
	if top.Name == "" {
		v.add("name", "is required")
	}
	if sc.Start, err = time.Parse(time.RFC3339, top.Start); err != nil {
		v.add("start", "must be an RFC 3339 time, e.g. 2026-03-02T09:00:00Z")
	}
	if len(bytes.TrimSpace(top.Config)) == 0 || string(bytes.TrimSpace(top.Config)) == "null" {
		v.add("config", "is required (the config file format)")
	} else if l, err := config.Parse(top.Config, source+" config"); err != nil {
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			for _, p := range ve.Problems {
				v.add("config."+p.Path, p.Msg)
			}
		} else {
			v.add("config", err.Error())
		}
	} else {
		sc.Loaded, v.cfg, v.loaded, v.initial = l, top.Config, l, l
	}
	if len(top.Default) > 0 && string(top.Default) != "null" {
		sc.Default = v.response("default", top.Default, true)
	}
	if len(top.Script) == 0 {
		v.add("script", "needs at least one step")
	}
	sc.Script = v.script(top.Script)
	if len(top.Expect) > 0 && string(top.Expect) != "null" {
		var ex Expect
		if v.decode("expect", top.Expect, &ex) {
			v.profiles("expect.profiles", ex.Profiles)
			v.sessions("expect.sessions", ex.Sessions)
			sc.Expect = &ex
		}
	}
	if len(v.problems) > 0 {
		return nil, &ValidationError{Source: source, Problems: v.problems}
	}
	return sc, nil
}

// strict decodes JSON refusing unknown fields.
func strict(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
