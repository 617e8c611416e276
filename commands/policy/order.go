package policy

import "sort"

// OrderInput is what [Config.ResolveOrder] needs besides the config.
type OrderInput struct {
	// Provider and Model name the candidate; Model is the forModel of the
	// cooldown check ("" ignores model-scoped cooldowns).
	Provider string
	Model    string
	// StoredOrder is the per-agent stored order override for Provider
	// (`openclaw models auth order set`), nil when none.
	StoredOrder []string
	// States holds the usageStats by profile id (missing = never used).
	States map[string]ProfileState
	// Preferred is the session's auth pin; it moves to the front while it
	// is usable for Model (reference §5 preferredProfile; seed 000 "Session
	// stickiness": a user pin in cooldown stays stored but is not tried).
	Preferred string
	// Locked says Preferred is a user pin (OpenClaw's
	// userLockedAuthProfileId) under rule revision 4: while it is usable
	// it leads even when the base list (an explicit order) does not hold
	// it (reference §7 step 3: an eligible user-locked profile is
	// prepended).
	Locked bool
	// Now is the decision time, Unix ms.
	Now int64
}

// typeRank is the round-robin primary key (seed 000 "Rotation order":
// OAuth, then static token, then API key).
func typeRank(t string) int {
	switch t {
	case ProfileOAuth:
		return 0
	case ProfileToken:
		return 1
	case ProfileAPIKey:
		return 2
	}
	return 3
}

// ResolveOrder returns the profile ids to try for a provider and model, in
// order (seed 000 "Rotation order"; reference §5):
//
//  1. Base list: the stored order override, else auth.order[provider], else
//     the configured profiles of the provider (by id). An explicit list
//     whose ids are all unknown falls back to the configured profiles.
//  2. Only configured profiles of this provider are eligible; duplicates
//     keep their first position.
//  3. With an explicit list (stored or auth.order) its order is kept;
//     otherwise usable profiles sort by type (oauth, token, api_key,
//     other), usable OAuth before expired OAuth, then lastUsed ascending
//     (missing = 0), then id.
//  4. Profiles unusable for the model follow, by soonest expiry of what
//     blocks the model, then by their position.
//  5. The preferred (pinned) profile moves to the front while usable;
//     a Locked one (a user pin, revision 4) is put in front while usable
//     even when step 1's list does not hold it.
//
// The result is a permutation of the eligible profiles, and a Locked
// preferred profile of the provider.
func (c Config) ResolveOrder(in OrderInput) []string {
	explicit := true
	base := in.StoredOrder
	if !c.anyKnown(base, in.Provider) {
		base = c.Order[in.Provider]
	}
	if !c.anyKnown(base, in.Provider) {
		explicit = false
		base = nil
		for _, p := range c.ProviderProfiles(in.Provider) {
			base = append(base, p.ID)
		}
	}
	type entry struct {
		p       Profile
		pos     int
		blocked int64
		usable  bool
	}
	var usable, cooling []entry
	seen := map[string]bool{}
	for i, id := range base {
		p, ok := c.Profile(id)
		if !ok || p.Provider != in.Provider || seen[id] {
			continue
		}
		seen[id] = true
		st := c.stateOf(in.States, p)
		e := entry{p: p, pos: i, usable: c.Usable(st, in.Model, in.Now), blocked: c.blockingUntil(st, in.Model, in.Now)}
		if e.usable {
			usable = append(usable, e)
		} else {
			cooling = append(cooling, e)
		}
	}
	if !explicit {
		sort.SliceStable(usable, func(i, j int) bool {
			a, b := usable[i], usable[j]
			if ra, rb := typeRank(a.p.Type), typeRank(b.p.Type); ra != rb {
				return ra < rb
			}
			if ea, eb := a.p.expired(in.Now), b.p.expired(in.Now); ea != eb {
				return !ea
			}
			la, lb := in.States[a.p.ID].LastUsed, in.States[b.p.ID].LastUsed
			if la != lb {
				return la < lb
			}
			return a.p.ID < b.p.ID
		})
	}
	sort.SliceStable(cooling, func(i, j int) bool {
		if cooling[i].blocked != cooling[j].blocked {
			return cooling[i].blocked < cooling[j].blocked
		}
		return cooling[i].pos < cooling[j].pos
	})
	out := make([]string, 0, len(usable)+len(cooling))
	for _, e := range usable {
		if e.p.ID == in.Preferred {
			out = append(out, e.p.ID)
		}
	}
	for _, e := range usable {
		if e.p.ID != in.Preferred {
			out = append(out, e.p.ID)
		}
	}
	for _, e := range cooling {
		out = append(out, e.p.ID)
	}
	if in.Locked && in.Preferred != "" && !seen[in.Preferred] {
		if p, ok := c.Profile(in.Preferred); ok && p.Provider == in.Provider && c.Usable(c.stateOf(in.States, p), in.Model, in.Now) {
			out = append([]string{p.ID}, out...)
		}
	}
	return out
}

// expired reports whether an OAuth credential's access token has expired
// (only OAuth has the usable-before-expired tier).
func (p Profile) expired(now int64) bool {
	return p.Type == ProfileOAuth && p.ExpiresAt > 0 && p.ExpiresAt <= now
}

func (c Config) anyKnown(ids []string, provider string) bool {
	for _, id := range ids {
		if p, ok := c.Profile(id); ok && p.Provider == provider {
			return true
		}
	}
	return false
}

func (c Config) stateOf(states map[string]ProfileState, p Profile) ProfileState {
	s, ok := states[p.ID]
	if !ok {
		s = ProfileState{ProfileID: p.ID, Provider: p.Provider}
	}
	if s.Provider == "" {
		s.Provider = p.Provider
	}
	return s
}

// LoopLimit is the inner run-loop limit min(160, max(32, 24 + 8 ×
// max(1, profiles))) with the Params constants (reference §9; POLICY
// "Retries, probes, limits").
func (p Params) LoopLimit(profiles int) int {
	return min(p.LoopLimitMax, max(p.LoopLimitMin, p.LoopLimitBase+p.LoopLimitPerProfile*max(1, profiles)))
}
