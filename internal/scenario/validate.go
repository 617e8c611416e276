package scenario

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// validator collects a scenario file's problems. It follows the config in
// force through the script (cfg, the config file as JSON, and loaded,
// nil when the config is invalid): a remove_profile step changes it for
// the steps after it (removed: the step that removed a profile, by id).
// initial is the scenario's own config, whose profiles the run reports.
type validator struct {
	problems []Problem
	source   string
	cfg      json.RawMessage
	loaded   *config.Loaded
	initial  *config.Loaded
	removed  map[string]string
}

func (v *validator) add(path, msg string) {
	v.problems = append(v.problems, Problem{Path: path, Msg: msg})
}

// script checks every step in order (a remove_profile step changes the
// config the steps after it are checked against; at never goes back) and
// gives each step that runs a turn its id: a turn's own or "t<step
// number>", as a use step's warm-up turn has; a duplicate is a problem.
func (v *validator) script(raws []json.RawMessage) []Step {
	var out []Step
	ids := map[string]bool{}
	last := -1 // the latest step so far (with a valid at)
	for i, raw := range raws {
		path := fmt.Sprintf("script[%d]", i)
		st := v.step(path, raw)
		if _, ok := ParseOffset(st.At); ok {
			if last >= 0 && st.Offset < out[last].Offset {
				v.add(path+".at", fmt.Sprintf("%q is before script[%d]'s %q: steps are in time order (equal times run in script order)",
					st.At, last, out[last].At))
			} else {
				last = i
			}
		}
		id, idPath := "", path+".turn.id"
		switch {
		case st.Turn != nil:
			if st.Turn.ID == "" {
				st.Turn.ID = fmt.Sprintf("t%d", i+1)
			}
			id = st.Turn.ID
		case st.Command != nil && st.Command.Do == "use":
			st.Command.turnID = fmt.Sprintf("t%d", i+1)
			id, idPath = st.Command.turnID, path+".command"
		}
		if id != "" {
			if ids[id] {
				v.add(idPath, fmt.Sprintf("duplicate turn id %q", id))
			}
			ids[id] = true
		}
		out = append(out, st)
	}
	return out
}

func (v *validator) step(path string, raw json.RawMessage) Step {
	var st Step
	if !v.decode(path, raw, &st) {
		return st
	}
	off, ok := ParseOffset(st.At)
	if !ok {
		v.add(path+".at", fmt.Sprintf("%q is not an offset like +45s or +2m30s", st.At))
	}
	st.Offset = off
	switch {
	case st.Turn != nil && st.Command != nil:
		v.add(path, "has both turn and command; a step is one of them")
	case st.Turn != nil:
		v.turn(path+".turn", st.Turn, raw)
	case st.Command != nil:
		v.command(path+".command", st.Command)
	default:
		v.add(path, "needs a turn or a command")
	}
	return st
}

func (v *validator) turn(path string, t *Turn, raw json.RawMessage) {
	if t.Session == "" {
		v.add(path+".session", "is required")
	}
	v.key(path+".session", events.AggSession, t.Session)
	v.key(path+".id", events.AggTurn, t.ID)
	if t.Agent != "" {
		if err := engine.ValidateAgent(t.Agent); err != nil {
			v.add(path+".agent", err.Error())
		}
	}
	switch t.Chat {
	case "", "direct", "group", "channel":
	default:
		v.add(path+".chat", fmt.Sprintf("%q is not direct|group|channel", t.Chat))
	}
	if t.Model != "" {
		v.model(path+".model", t.Model)
	}
	switch t.Source {
	case "", "user", "default", "auto", "legacy", "cron":
	default:
		v.add(path+".source", fmt.Sprintf("%q is not user|default|auto|legacy|cron", t.Source))
	}
	if t.Source != "" && t.Model == "" {
		v.add(path+".source", "needs a model")
	}
	v.fallbacks(path+".fallbacks", t)
	v.fallbacksOverride(path+".fallbacks_override", t)
	// Re-decode responses one by one for precise paths.
	var rr struct {
		Turn struct {
			Responses []json.RawMessage `json:"responses"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(raw, &rr)
	for i, r := range rr.Turn.Responses {
		rp := fmt.Sprintf("%s.responses[%d]", path, i)
		if resp := v.response(rp, r, false); resp != nil && i < len(t.Responses) {
			v.during(rp+".during", t, resp)
			t.Responses[i] = *resp
		}
	}
	if t.Expect != nil {
		v.turnExpect(path+".expect", t.Expect)
	}
}

// duringDos are the commands a response's during may run: session
// commands (the gateway's own steps do not arrive mid-call).
const duringDos = "model|model_default|pin|new|reset|sessions_reset|compaction"

// during checks a response's during command: a session command, on the
// turn's session unless it names one.
func (v *validator) during(path string, t *Turn, r *Response) {
	c := r.During
	if c == nil {
		return
	}
	if !strings.Contains("|"+duringDos+"|", "|"+c.Do+"|") {
		v.add(path+".do", fmt.Sprintf("%q is not %s: only a session command arrives during a call", c.Do, duringDos))
		return
	}
	if c.Session == "" {
		c.Session = t.Session
	}
	v.command(path, c)
}

// fallbacks checks a turn's payload.fallbacks: a cron payload's, each
// provider/model.
func (v *validator) fallbacks(path string, t *Turn) {
	if t.Fallbacks == nil {
		return
	}
	if t.Model == "" || policy.SelectionSource(t.Source) != policy.SourceCron {
		v.add(path, "is a cron payload's payload.fallbacks: it needs a model with source: cron")
	}
	v.modelList(path, *t.Fallbacks)
}

// fallbacksOverride checks a turn's fallbacks_override: each
// provider/model, and not beside a cron payload's fallbacks.
func (v *validator) fallbacksOverride(path string, t *Turn) {
	if t.FallbacksOverride == nil {
		return
	}
	if t.Fallbacks != nil {
		v.add(path, "and fallbacks both given: a cron payload's fallbacks are its override; write one")
	}
	v.modelList(path, *t.FallbacksOverride)
}

// maxFallbacks bounds a fallbacks or fallbacks_override list, as POST
// /v1/turns does.
const maxFallbacks = 64

// modelList checks a list of provider/model entries that take no @profile.
func (v *validator) modelList(path string, list []string) {
	if len(list) > maxFallbacks {
		v.add(path, fmt.Sprintf("has %d entries; at most %d", len(list), maxFallbacks))
		return
	}
	for i, f := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if _, prof, err := engine.ParseModelSelection(f); err == nil && prof != "" {
			v.add(p, fmt.Sprintf("%q: a fallback takes no @profile", f))
			continue
		}
		v.model(p, f)
	}
}

// model adds a problem at path when s is not "provider/model".
func (v *validator) model(path, s string) {
	_, err := engine.ParseModelRef(s)
	switch {
	case err == nil:
	case len(s) > engine.MaxModelRefLen || strings.Contains(s, "/") && engine.ModelRefProblem(s) != "":
		v.add(path, strings.TrimPrefix(err.Error(), engine.ErrBadRequest.Error()+": "))
	default:
		v.add(path, fmt.Sprintf("%q is not provider/model", s))
	}
}

func (v *validator) response(path string, raw json.RawMessage, isDefault bool) *Response {
	var r Response
	if !v.decode(path, raw, &r) {
		return nil
	}
	if !isDefault || r.Candidate != "" {
		if _, _, ok := splitModel(r.Candidate); !ok {
			v.add(path+".candidate", fmt.Sprintf("%q is not provider/model", r.Candidate))
		}
	}
	if r.Profile != "" {
		v.profileOf(path+".profile", r.Profile, modelRef(r.Candidate).Provider)
	}
	if r.OK == (r.Error != nil) {
		v.add(path, `needs exactly one of "ok: true" and "error"`)
	}
	if r.LatencyMs < 0 {
		v.add(path+".latency_ms", "must be ≥ 0")
	}
	if r.Repeat < 0 {
		v.add(path+".repeat", "must be ≥ 1")
	}
	if r.OK && (r.OutputStarted || r.ToolStarted || r.ToolBatchSettled) {
		v.add(path, "output_started, tool_started and tool_batch_settled describe an error: an answer has none")
	}
	if isDefault && r.During != nil {
		// It would be accepted and never run: a default answers many
		// calls, and during belongs to one in-flight call.
		v.add(path+".during", "only a turn's own response can have during")
	}
	return &r
}

// ParseOffset parses "+45s", "+2m30s", "+0s" (a Go duration after "+").
func ParseOffset(s string) (time.Duration, bool) {
	if !strings.HasPrefix(s, "+") {
		return 0, false
	}
	d, err := time.ParseDuration(s[1:])
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// parseExpectTime reads an expected time: "+<duration>" from start, RFC
// 3339, or "none"/"" (unset). It returns Unix ms (0 = unset).
func parseExpectTime(s string, start time.Time) (int64, bool) {
	switch s {
	case "", "none":
		return 0, true
	}
	if d, ok := ParseOffset(s); ok {
		return events.Millis(start.Add(d)), true
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false
	}
	return events.Millis(t), true
}

// splitModel splits "provider/model" (engine.ParseModelRef).
func splitModel(s string) (string, string, bool) {
	ref, err := engine.ParseModelRef(s)
	return ref.Provider, ref.Model, err == nil
}

// modelRef is "provider/model" as a ModelRef (zero when it is not one).
func modelRef(s string) events.ModelRef {
	p, m, _ := splitModel(s)
	return events.ModelRef{Provider: p, Model: m}
}

// splitProfile splits `/model`'s "provider/model[@profile]" into the
// model and the profile with the engine's parser
// (engine.ParseModelSelection), the one `fledger serve` uses too.
func splitProfile(s string) (string, string) {
	ref, p, err := engine.ParseModelSelection(s)
	if err != nil {
		return s, ""
	}
	return ref.String(), p
}

// key adds a problem at path when id could not be stored as an aggregate
// key (too long for events.MaxKeyLen, not UTF-8); "" is checked by the
// caller ("is required").
func (v *validator) key(path string, agg events.Aggregate, id string) {
	if id == "" {
		return
	}
	if err := engine.ValidateKey(agg, id); err != nil {
		v.add(path, err.Error())
	}
}
