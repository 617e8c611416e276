package replay

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// LabelCronFallback is a chain entry's label when it is one of a cron
// payload's own fallbacks (payload.fallbacks), which the event records as
// route origin configured-fallback.
const LabelCronFallback = "cron payload fallback"

// LabelOverrideFallback is a chain entry's label when the caller supplied
// the turn's fallbacks (TurnStarted.fallbacks_override): OpenClaw records
// those as route origin configured-fallback too.
const LabelOverrideFallback = "caller's fallbacks override"

// turnContext is what an explanation knows of the stream before its turn:
// the state of each profile just before each of the turn's profile events
// (by event id), each provider's last primary cooldown probe before the
// turn (the probe throttle's input, engine policy.Env.ProbeAt) and the
// configs in force (agent + "\x00" + hash → canonical config). Any of them
// may be nil (not known).
type turnContext struct {
	before  map[string]policy.ProfileState
	probeAt map[string]int64
	configs map[string]json.RawMessage
	// defaultMarks holds the ids of the LiveSwitchMarked events a
	// `/model default` made ([defaultMarks]).
	defaultMarks map[string]bool
	// racing holds the user selections the turn takes as a derived live
	// switch, by event id ([racingSelections]).
	racing map[string]racingSelection
}

// probeFold follows the last primary cooldown probe of every agent's
// providers through the stream, as the engine folds it, and keeps a copy
// at each explained turn's start.
type probeFold struct {
	last  map[string]int64            // agent + "\x00" + provider → StartedAt
	snaps map[string]map[string]int64 // agent + "\x00" + turn id → provider → StartedAt
}

func newProbeFold() *probeFold {
	return &probeFold{last: map[string]int64{}, snaps: map[string]map[string]int64{}}
}

// fold folds ev; explained says ev is the TurnStarted of a turn being
// explained.
func (f *probeFold) fold(ev *events.Event, explained bool) {
	switch e := ev.Data.(type) {
	case events.AttemptStarted:
		if policy.AttemptKind(e.Kind) == policy.KindProbe && e.CandidateIndex == 0 {
			k := ev.Agent + "\x00" + e.Provider
			f.last[k] = max(f.last[k], e.StartedAt)
		}
	case events.TurnStarted:
		if !explained {
			return
		}
		snap := map[string]int64{}
		prefix := ev.Agent + "\x00"
		for k, at := range f.last {
			if len(k) > len(prefix) && k[:len(prefix)] == prefix {
				snap[k[len(prefix):]] = at
			}
		}
		f.snaps[ev.Agent+"\x00"+e.TurnID] = snap
	}
}

// policyConfig parses the config the turn ran under (nil when the stream
// does not hold it).
func (x *Explanation) policyConfig(hash string) *policy.Config {
	raw := x.ctx.configs[x.Agent+"\x00"+hash]
	if len(raw) == 0 {
		return nil
	}
	l, err := config.Parse(raw, "ConfigApplied "+hash, config.Stored())
	if err != nil {
		return nil
	}
	return &l.Policy
}

// cronPayloadChain reports whether a cron turn's chain was built from its
// payload's own fallbacks (payload.fallbacks, the run's fallbacksOverride)
// rather than the configured ones: it is none of the chains the config
// builds for the cron model without an override (agents.defaults or an
// agent's own model). With no config known it reports false.
func cronPayloadChain(e events.TurnStarted, c *policy.Config) bool {
	if policy.SelectionSource(e.SelectionSource) != policy.SourceCron || c == nil {
		return false
	}
	if e.Strict {
		return true // payload.fallbacks: [] — a strict cron run
	}
	scopes := []policy.AgentModel{{Primary: c.Defaults.Primary, Fallbacks: c.Defaults.Fallbacks, HasFallbacks: true}}
	for _, id := range sortedIDs(c.Agents) {
		a := c.Agents[id]
		if a.Primary == (policy.ModelRef{}) {
			a.Primary = c.Defaults.Primary
		}
		if !a.HasFallbacks {
			a.Fallbacks = c.Defaults.Fallbacks
		}
		scopes = append(scopes, a)
	}
	for _, s := range scopes {
		if sameChain(policy.BuildChain(e.Requested, s.Fallbacks, false, s.Primary), e.Chain) {
			return false
		}
	}
	return true
}

func sameChain(a, b []events.Candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedIDs(m map[string]policy.AgentModel) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// throttleDetail says why a skipped primary was not probed when the
// per-provider probe throttle was still closed at the skip (now): the last
// primary probe of the provider, before the turn or in it, was less than
// failover.probeThrottleMs ago ("" when the throttle was open).
func (x *Explanation) throttleDetail(e events.CandidateSkipped, now int64, at func(int64) string) string {
	if e.CandidateIndex != 0 || e.Reason == policy.ReasonAuth || e.Reason == policy.ReasonAuthPermanent {
		return ""
	}
	last := max(x.ctx.probeAt[e.Provider], x.probes[e.Provider])
	throttle := policy.DefaultParams().ProbeThrottleMs
	if x.cfg != nil {
		throttle = x.cfg.ProbeThrottleMs
	}
	if last == 0 || now-last >= throttle {
		return ""
	}
	opens := last + throttle
	return fmt.Sprintf("not probed: the probe throttle allows one primary probe per provider every %s (failover.probeThrottleMs), "+
		"and %s's last was at %s, %s before this skip, so it was still closed; it opens at %s, %s after this skip",
		msDur(throttle), e.Provider, events.FromMillis(last).Format(TimeLayout), msDur(now-last), at(opens), msDur(opens-now))
}
