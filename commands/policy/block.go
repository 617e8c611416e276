package policy

import "github.com/fledger/fledger/events"

// Subscription blocks (issue 17; seed 000 "OpenAI Codex subscription plus
// API-key backup": "OpenClaw records the exact reset time when Codex
// provides one, tries the next ordered auth profile … Once the reset time
// passes, the subscription profile is eligible again"; reference §3
// "Subscription blocks" markAuthProfileBlockedUntil, isProfileInCooldown).

// BlockedSubscriptionLimit is the only blockedReason (reference §4).
const BlockedSubscriptionLimit = "subscription_limit"

// blocks reports whether an active subscription block applies to model:
// unscoped, or scoped to model. Model "" ignores scoped blocks, as it
// ignores scoped cooldowns.
func (s ProfileState) blocks(model string, now int64) bool {
	return s.BlockedUntil > now && (s.BlockedModel == "" || s.BlockedModel == model)
}

// recordBlock applies a rate_limit failure f to ev when a subscription
// block decides it, and reports whether it did (the ladder step is then
// skipped). The counters were already counted by RecordFailure.
//
//   - f carries a provider reset after now, and SubscriptionBlockMaxMs > 0:
//     blockedUntil = the reset, at most now + SubscriptionBlockMaxMs
//     (BlockBounded), or the active block's deadline when that is later
//     (max of existing and new, reference §3; WindowKept);
//     blockedReason subscription_limit; blockedSource = the reset's
//     source; blockedModel = f.Model, except that an active block stays
//     model-scoped only while every observation names that same model
//     (mixed or unknown models widen it to every model). An expired
//     cooldown's fields are cleared (the block replaces it); an active
//     cooldown keeps its deadline (seed 004: never shortened; WindowKept).
//   - f carries no reset but an active block applies to its model (a probe
//     near the reset still limited): the failure counts, no cooldown is
//     started on top and the block keeps its deadline (WindowKept;
//     OpenClaw 2026.9.6 records nothing at all, reference §3 step 1).
//
// Otherwise it reports false and the rate limit takes the ladder.
func (p Params) recordBlock(ev *events.ProfileFailureRecorded, s ProfileState, f Failure, now int64) bool {
	r := f.Reset
	if p.SubscriptionBlockMaxMs <= 0 || r == nil || r.At <= now {
		if s.blocks(f.Model, now) {
			ev.WindowKept = true
			return true
		}
		return false
	}
	until, bounded := r.At, false
	if limit := now + p.SubscriptionBlockMaxMs; until > limit {
		until, bounded = limit, true
	}
	active := s.BlockedUntil > now
	model, source := f.Model, r.Source
	if active && s.BlockedModel != f.Model {
		model = ""
	}
	if active && s.BlockedUntil >= until {
		until, bounded, source = s.BlockedUntil, false, s.BlockedSource
		ev.WindowKept = true
	}
	ev.BlockedUntil, ev.BlockedReason, ev.BlockedSource, ev.BlockedModel = until, BlockedSubscriptionLimit, source, model
	rc := *r
	ev.Reset, ev.BlockBounded = &rc, bounded
	if s.CooldownUntil > now {
		ev.WindowKept = true
	} else {
		ev.CooldownUntil, ev.CooldownReason, ev.CooldownModel = 0, "", ""
	}
	return true
}

// keepsBlock reports whether a success on model at now keeps s's block:
// an active block scoped to another model stays (a gpt-5-mini answer
// proves nothing about gpt-5's usage window), unless
// ClearOtherModelCooldownOnSuccess (OpenClaw 2026.9.6 clears every failure
// field on success).
func (p Params) keepsBlock(s ProfileState, model string, now int64) bool {
	return !p.ClearOtherModelCooldownOnSuccess && s.BlockedUntil > now && s.BlockedModel != "" && s.BlockedModel != model
}

// resetWindowActive reports whether a provider-reported reset window (an
// active subscription block) applies to model on any of states: the
// primary is then not probed merely for being rate limited (reference §7
// step 5, OpenClaw 2026.9.6 hasActiveProviderRateLimitResetWindow:
// "provider-recorded reset windows still remain authoritative until near
// expiry").
func resetWindowActive(states []ProfileState, model string, now int64) bool {
	for _, s := range states {
		if s.blocks(model, now) {
			return true
		}
	}
	return false
}

// allBlocked reports whether every one of states is unusable for model
// because of an active subscription block: a fallback sibling is then not
// probed through the transient probe slot, since the provider said when
// the window reopens (seed 000 "Cooldown skip vs probe": siblings are
// attempted "when the failure looks transient").
func allBlocked(states []ProfileState, model string, now int64) bool {
	if len(states) == 0 {
		return false
	}
	for _, s := range states {
		if !s.blocks(model, now) {
			return false
		}
	}
	return true
}

// providerWait is how long the provider asked to wait, in ms at now: the
// longer of its retry-after and the time to its reset.
func providerWait(out Outcome, now int64) int64 {
	w := out.RetryAfterMs
	if out.Reset != nil && out.Reset.At-now > w {
		w = out.Reset.At - now
	}
	return w
}

// elsewhere reports whether the current call could go somewhere else at
// once: a later candidate, or an untried usable profile of the current
// candidate's provider for its model.
func (d *decider) elsewhere() bool {
	i := d.st.Current.CandidateIndex
	if d.nextIndex(i) >= 0 {
		return true
	}
	c := d.st.Chain[i]
	for _, id := range d.order(c) {
		pr, _ := d.cfg.Profile(id)
		if id != d.st.Current.ProfileID && !contains(d.st.Tried, id) && d.cfg.Usable(d.state(pr), c.Model, d.now()) {
			return true
		}
	}
	return false
}

func copyReset(r *events.ProviderReset) *events.ProviderReset {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

func copyWindow(w *events.UsageWindow) *events.UsageWindow {
	if w == nil {
		return nil
	}
	c := *w
	return &c
}
