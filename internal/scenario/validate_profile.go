package scenario

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// profile returns the profile id of the config in force at this step and
// whether it is configured there; with no valid config it reports true
// (the config's own problems are reported instead).
func (v *validator) profile(id string) (policy.Profile, bool) {
	if v.loaded == nil {
		return policy.Profile{}, true
	}
	return v.loaded.Policy.Profile(id)
}

// known checks that a step names a profile of the config in force, as the
// engine will when the step runs; the problem at path lists the profiles
// there are (and the likeliest one meant).
func (v *validator) known(path, id string) (policy.Profile, bool) {
	p, ok := v.profile(id)
	if !ok {
		v.add(path, v.unknownProfile(id, v.loaded))
	}
	return p, ok
}

// profileOf checks that id is a profile of the config in force and of
// provider (a model's provider; "" = any).
func (v *validator) profileOf(path, id, provider string) {
	p, ok := v.known(path, id)
	if ok && v.loaded != nil && provider != "" && p.Provider != provider {
		v.add(path, fmt.Sprintf("auth profile %q is of provider %s, not %s", id, p.Provider, provider))
	}
}

// unknownProfile is the problem of an id config in does not have: the profiles it has, the step that removed this one, or the
// configured id it is likely a misspelling of (another case, a dot for the
// colon; a pattern is no id).
func (v *validator) unknownProfile(id string, in *config.Loaded) string {
	ids := make([]string, 0, len(in.Policy.Profiles))
	hint := ""
	for _, p := range in.Policy.Profiles {
		ids = append(ids, p.ID)
		if looseID(id) == looseID(p.ID) {
			hint = fmt.Sprintf("; did you mean %q?", p.ID)
		}
	}
	if strings.ContainsAny(id, "*>") {
		hint = "; a step names one profile exactly, not a pattern"
	}
	if at, ok := v.removed[id]; ok && in == v.loaded {
		hint = "; " + at + " removed it"
	}
	list := "the config in force has no auth profiles"
	if len(ids) > 0 {
		list = "profiles: " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("unknown auth profile %q (%s)%s", id, list, hint)
}

// looseID is a profile id without case, dots and colons, to tell a
// misspelt id.
func looseID(id string) string {
	return strings.NewReplacer(".", "", ":", "").Replace(strings.ToLower(id))
}

// authOrder checks an auth_order step's stored order as the engine's
// SetAuthOrder will: a provider with a configured profile, and each id a
// configured profile of that provider, listed once.
func (v *validator) authOrder(path string, c *Command) {
	for i, p := range c.Profiles {
		v.key(fmt.Sprintf("%s.profiles[%d]", path, i), events.AggProfile, p)
	}
	if v.loaded == nil || c.Provider == "" || len(c.Profiles) == 0 {
		return
	}
	if err := v.loaded.Policy.CheckOrderProvider(c.Provider); err != nil {
		v.add(path+".provider", strings.TrimPrefix(err.Error(), policy.ErrBadOrder.Error()+": "))
		return
	}
	seen := map[string]int{}
	for i, id := range c.Profiles {
		at := fmt.Sprintf("%s.profiles[%d]", path, i)
		if j, dup := seen[id]; dup {
			v.add(at, fmt.Sprintf("%q is listed twice (also at profiles[%d])", id, j))
			continue
		}
		seen[id] = i
		v.profileOf(at, id, c.Provider)
	}
}

// expectedProfile checks that a profile expectation names a profile of the
// scenario's config: the run reports those (a removed one too).
func (v *validator) expectedProfile(path, id string) {
	if v.initial == nil {
		return
	}
	if _, ok := v.initial.Policy.Profile(id); !ok {
		v.add(path, v.unknownProfile(id, v.initial))
	}
}
