package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
)

// commandDos are the command steps, as problems name them.
const commandDos = "model|model_default|pin|new|reset|sessions_reset|compaction|auth_order|use|remove_profile|restart"

// commandTakes are the keys each command step takes besides do: any other
// key given is refused at its path, as an unknown key is (a profile on a
// model step was dropped without a word, and the run used another).
var commandTakes = map[string][]string{
	"model":          {"session", "model", "source", "origin"},
	"model_default":  {"session", "agent"},
	"pin":            {"session", "profile", "source"},
	"new":            {"session"},
	"reset":          {"session"},
	"sessions_reset": {"session"},
	"compaction":     {"session"},
	"auth_order":     {"provider", "profiles"},
	"use":            {"profile", "model"},
	"remove_profile": {"profile"},
	"restart":        {},
}

// untaken refuses the keys c sets that its do does not take (origin,
// and session on the gateway's steps, have messages of their own).
func (v *validator) untaken(path string, c *Command) {
	takes, ok := commandTakes[c.Do]
	if !ok {
		return // an unknown do is named below
	}
	set := []struct {
		key string
		on  bool
	}{
		{"session", c.Session != ""}, {"model", c.Model != ""}, {"source", c.Source != ""},
		{"profile", c.Profile != ""}, {"agent", c.Agent != ""}, {"provider", c.Provider != ""},
		{"profiles", c.Profiles != nil},
	}
	for _, f := range set {
		if !f.on || slices.Contains(takes, f.key) || f.key == "session" && (c.Do == "use" || c.Do == "remove_profile" || c.Do == "restart") {
			continue
		}
		msg := "is not taken by do: " + c.Do
		if c.Do == "model" && f.key == "profile" && c.Model != "" {
			msg += fmt.Sprintf(" (a user pin goes with the model: model: %s@%s)", c.Model, c.Profile)
		}
		v.add(path+"."+f.key, msg)
	}
}

func (v *validator) command(path string, c *Command) {
	if c.Origin != "" && c.Do != "model" {
		v.add(path+".origin", "is only taken by do: model")
	}
	v.untaken(path, c)
	switch c.Do {
	case "auth_order":
		if c.Provider == "" {
			v.add(path+".provider", "is required")
		}
		v.key(path+".provider", events.AggOrder, c.Provider)
		v.authOrder(path, c)
		return
	case "use":
		v.use(path, c)
		return
	case "remove_profile", "restart":
		if c.Session != "" {
			v.add(path+".session", "is not taken: a "+c.Do+" step acts on the gateway, not on a session")
		}
		if c.Do == "remove_profile" {
			v.removeProfile(path, c)
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
			} else {
				v.profileOf(path+".model", p, modelRef(c.Model).Provider)
			}
		}
		switch policy.SelectionSource(c.Source) {
		case "", policy.SourceUser, policy.SourceDefault, policy.SourceAuto, policy.SourceLegacy:
		case policy.SourceCron:
			v.add(path+".source", "cron is not a session's selection: a cron model applies to one turn only; write it on the turn (model and source: cron)")
		default:
			v.add(path+".source", fmt.Sprintf("%q is not user|default|auto|legacy", c.Source))
		}
		if c.Origin != "" {
			v.model(path+".origin", c.Origin)
			if c.Source != string(policy.SourceAuto) {
				v.add(path+".origin", "is only taken with source auto (a stored auto override's origin)")
			}
		}
	case "pin":
		if c.Profile == "" {
			v.add(path+".profile", "is required")
		}
		v.key(path+".profile", events.AggProfile, c.Profile)
		if c.Profile != "" {
			v.known(path+".profile", c.Profile)
		}
		if c.Source != "" && c.Source != "auto" && c.Source != "user" {
			v.add(path+".source", fmt.Sprintf("%q is not auto|user", c.Source))
		}
	case "model_default", "new", "reset", "sessions_reset", "compaction":
	default:
		v.add(path+".do", fmt.Sprintf("%q is not %s", c.Do, commandDos))
	}
}

// use checks a use step (profile, a configured one; model, its provider's,
// by default the first model of the configured defaults' chain of that
// provider) and sets its session (SeedSession).
func (v *validator) use(path string, c *Command) {
	if c.Session != "" {
		v.add(path+".session", "is not taken: a use step's warm-up turn runs on session "+SeedSession("<profile>"))
	}
	if c.Profile == "" {
		v.add(path+".profile", "is required")
		return
	}
	v.key(path+".profile", events.AggProfile, c.Profile)
	c.Session = SeedSession(c.Profile)
	v.key(path+".profile", events.AggSession, c.Session)
	p, ok := v.known(path+".profile", c.Profile)
	if !ok {
		return
	}
	if c.Model == "" && v.loaded == nil {
		return
	}
	if c.Model == "" {
		c.Model = defaultModel(v.loaded.Policy, p.Provider)
		if c.Model == "" {
			v.add(path+".model", fmt.Sprintf("is required: no configured default model is of provider %s", p.Provider))
		}
		return
	}
	v.model(path+".model", c.Model)
	if ref := modelRef(c.Model); v.loaded != nil && ref.Provider != "" && ref.Provider != p.Provider {
		v.add(path+".model", fmt.Sprintf("%q is not of the profile's provider %s", c.Model, p.Provider))
	}
}

// defaultModel is the first model of agents.defaults (primary, then
// fallbacks) of provider ("" = none).
func defaultModel(c policy.Config, provider string) string {
	for _, m := range append([]policy.ModelRef{c.Defaults.Primary}, c.Defaults.Fallbacks...) {
		if m.Provider == provider {
			return m.String()
		}
	}
	return ""
}

// removeProfile checks a remove_profile step and builds the config it
// leaves in force, which is then the config of the steps after it.
func (v *validator) removeProfile(path string, c *Command) {
	if c.Profile == "" {
		v.add(path+".profile", "is required")
		return
	}
	if v.loaded == nil {
		return
	}
	if _, ok := v.known(path+".profile", c.Profile); !ok {
		return
	}
	raw, err := withoutProfile(v.cfg, c.Profile)
	if err != nil {
		v.add(path, err.Error())
		return
	}
	l, err := config.Parse(raw, v.source+" "+path)
	if err != nil {
		var ve *config.ValidationError
		if !errors.As(err, &ve) {
			v.add(path, err.Error())
			return
		}
		for _, p := range ve.Problems {
			v.add(path, "the config without "+c.Profile+": "+p.String())
		}
		return
	}
	c.config, v.cfg, v.loaded = l, raw, l
	if v.removed == nil {
		v.removed = map[string]string{}
	}
	v.removed[c.Profile] = strings.TrimSuffix(path, ".command")
}
