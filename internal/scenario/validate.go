package scenario

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

type validator struct{ problems []Problem }

func (v *validator) add(path, msg string) {
	v.problems = append(v.problems, Problem{Path: path, Msg: msg})
}

func (v *validator) step(path string, raw json.RawMessage) Step {
	var st Step
	if err := strict(raw, &st); err != nil {
		// Decode again leniently to report the fields one by one.
		v.add(path, err.Error())
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
	if len(t.Agent) > events.MaxAgentLen {
		v.add(path+".agent", fmt.Sprintf("is %d bytes; the limit is %d", len(t.Agent), events.MaxAgentLen))
	}
	switch t.Chat {
	case "", "direct", "group", "channel":
	default:
		v.add(path+".chat", fmt.Sprintf("%q is not direct|group|channel", t.Chat))
	}
	if t.Model != "" {
		if _, _, ok := splitModel(t.Model); !ok {
			v.add(path+".model", fmt.Sprintf("%q is not provider/model", t.Model))
		}
	}
	switch t.Source {
	case "", "user", "default", "auto", "legacy", "cron":
	default:
		v.add(path+".source", fmt.Sprintf("%q is not user|default|auto|legacy|cron", t.Source))
	}
	if t.Source != "" && t.Model == "" {
		v.add(path+".source", "needs a model")
	}
	// Re-decode responses one by one for precise paths.
	var rr struct {
		Turn struct {
			Responses []json.RawMessage `json:"responses"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(raw, &rr)
	for i, r := range rr.Turn.Responses {
		if resp := v.response(fmt.Sprintf("%s.responses[%d]", path, i), r, false); resp != nil && i < len(t.Responses) {
			t.Responses[i] = *resp
		}
	}
	if e := t.Expect; e != nil {
		switch e.Outcome {
		case "", "succeeded", "exhausted", "stopped", "unfinished":
		default:
			v.add(path+".expect.outcome", fmt.Sprintf("%q is not succeeded|exhausted|stopped|unfinished", e.Outcome))
		}
		v.profiles(path+".expect.profiles", e.Profiles)
	}
}

func (v *validator) response(path string, raw json.RawMessage, isDefault bool) *Response {
	var r Response
	if err := strict(raw, &r); err != nil {
		v.add(path, err.Error())
		return nil
	}
	if !isDefault || r.Candidate != "" {
		if _, _, ok := splitModel(r.Candidate); !ok {
			v.add(path+".candidate", fmt.Sprintf("%q is not provider/model", r.Candidate))
		}
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
	return &r
}

func (v *validator) command(path string, c *Command) {
	if c.Do == "auth_order" {
		if c.Provider == "" {
			v.add(path+".provider", "is required")
		}
		v.key(path+".provider", events.AggOrder, c.Provider)
		for i, p := range c.Profiles {
			v.key(fmt.Sprintf("%s.profiles[%d]", path, i), events.AggProfile, p)
		}
		return
	}
	if c.Session == "" {
		v.add(path+".session", "is required")
	}
	v.key(path+".session", events.AggSession, c.Session)
	switch c.Do {
	case "model":
		if _, p, err := engine.ParseModelSelection(c.Model); err != nil {
			v.add(path+".model", fmt.Sprintf("%q is not provider/model[@profile]", c.Model))
		} else if p != "" {
			if err := engine.ValidateKey(events.AggProfile, p); err != nil {
				v.add(path+".model", "profile "+err.Error())
			}
		}
	case "pin":
		if c.Profile == "" {
			v.add(path+".profile", "is required")
		}
		v.key(path+".profile", events.AggProfile, c.Profile)
		if c.Source != "" && c.Source != "auto" && c.Source != "user" {
			v.add(path+".source", fmt.Sprintf("%q is not auto|user", c.Source))
		}
	case "model_default", "new", "reset", "compaction":
	default:
		v.add(path+".do", fmt.Sprintf("%q is not model|model_default|pin|new|reset|compaction|auth_order", c.Do))
	}
}

func (v *validator) profiles(path string, m map[string]ProfileExpect) {
	for id, p := range m {
		for name, tv := range map[string]*string{"cooldownUntil": p.CooldownUntil, "disabledUntil": p.DisabledUntil, "lastUsed": p.LastUsed} {
			if tv == nil {
				continue
			}
			if _, ok := parseExpectTime(*tv, time.Time{}); !ok {
				v.add(path+"."+id+"."+name, fmt.Sprintf("%q is not +<duration>, RFC 3339 or none", *tv))
			}
		}
	}
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
