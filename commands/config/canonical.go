package config

import (
	"encoding/json"
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// canonical renders the effective config in the given canonical format as
// a File with every value explicit, marshalled as compact JSON. encoding/json
// writes struct fields in declaration order and map keys sorted, so the
// bytes depend only on the config's meaning: two files that differ in
// layout, comments, key order or spelled-out defaults get the same hash.
//
// Formats (each frozen once released; a new key needs a new format):
//   - 1, the first release: no canonicalVersion key;
//     agents.defaults.model.fallbacks is null when the file gave none.
//   - 2: "canonicalVersion": 2 first; that fallbacks list is [] instead of
//     null (the schema refuses null). Same keys as format 1.
//   - 3: adds auth.cooldowns.subscriptionBlockMaxMs (after
//     neverCooldownProviders) and retry.provider.maxRetryDelayMs (after
//     jitterMax).
//   - 4: adds failover.formatAdvances (after loopLimit).
func canonical(c policy.Config, format int) ([]byte, error) {
	p := c.Params
	f := File{
		Auth:     &AuthSection{Cooldowns: canonicalCooldowns(&p)},
		Agents:   &AgentsSection{},
		Retry:    &RetrySection{Provider: canonicalRetry(&p)},
		Failover: canonicalFailover(&p),
	}
	if format >= 3 {
		f.Auth.Cooldowns.SubscriptionBlockMaxMs = &p.SubscriptionBlockMaxMs
		f.Retry.Provider.MaxRetryDelayMs = &p.MaxRetryDelayMs
	}
	if format >= 4 {
		f.Failover.FormatAdvances = &p.FormatAdvances
	}
	if len(c.Profiles) > 0 {
		f.Auth.Profiles = canonicalProfiles(c.Profiles)
	}
	if len(c.Order) > 0 {
		f.Auth.Order = c.Order
	}
	if c.Defaults.Primary != (events.ModelRef{}) {
		f.Agents.Defaults = &AgentDefaults{Model: &ModelSpec{
			Primary:   c.Defaults.Primary.String(),
			Fallbacks: refStrings(c.Defaults.Fallbacks),
		}}
		if format >= 2 {
			f.Agents.Defaults.Model.Fallbacks = nonNil(f.Agents.Defaults.Model.Fallbacks)
		}
	}
	if format >= 2 {
		f.CanonicalVersion = &format
	}
	if len(c.Agents) > 0 {
		entries, err := canonicalAgents(c.Agents)
		if err != nil {
			return nil, err
		}
		f.Agents.Entries = entries
	}
	return json.Marshal(f)
}

// canonicalCooldowns is auth.cooldowns with every key of format 1 and 2
// explicit, each value pointing into p; canonical adds format 3's key.
func canonicalCooldowns(p *policy.Params) *Cooldowns {
	return &Cooldowns{
		LadderMs:                         p.CooldownLadderMs,
		RateLimit:                        &p.RateLimitMode,
		RateLimitBaseMs:                  &p.RateLimitBaseMs,
		RateLimitMaxMs:                   &p.RateLimitMaxMs,
		BillingBackoffMs:                 &p.BillingBaseMs,
		BillingMaxMs:                     &p.BillingMaxMs,
		AuthPermanentBackoffMs:           &p.AuthPermanentBaseMs,
		AuthPermanentMaxMs:               &p.AuthPermanentMaxMs,
		FailureWindowMs:                  &p.FailureWindowMs,
		ResetOnExpiry:                    &p.ResetOnExpiry,
		InlineKeyBillingMs:               &p.InlineKeyBillingWindowMs,
		ClearOtherModelCooldownOnSuccess: &p.ClearOtherModelCooldownOnSuccess,
		AutoPinSurvivesCompaction:        &p.AutoPinSurvivesCompaction,
		RateLimitedProfileRotations:      &p.RateLimitRotations,
		OverloadedProfileRotations:       &p.OverloadedRotations,
		NeverCooldownProviders:           nonNil(p.NeverCooldownProviders),
	}
}

// canonicalRetry is retry.provider with every key of format 1 and 2
// explicit, each value pointing into p; canonical adds format 3's key.
func canonicalRetry(p *policy.Params) *ProviderRetry {
	return &ProviderRetry{
		MaxRetries:        &p.MaxRetries,
		BackoffBaseMs:     &p.RetryBackoffBaseMs,
		BackoffMaxMs:      &p.RetryBackoffMaxMs,
		WindowMs:          &p.RetryWindowMs,
		RateLimitRetryCap: &p.RateLimitRetryCap,
		JitterMin:         &p.JitterMin,
		JitterMax:         &p.JitterMax,
	}
}

// canonicalFailover is the failover section with every key of formats 1
// to 3 explicit, each value pointing into p except the SDK wait, which the
// file gives in seconds; canonical adds format 4's key.
func canonicalFailover(p *policy.Params) *FailoverSection {
	return &FailoverSection{
		SkipTTLMs:                   &p.SkipCacheTTLMs,
		SDKRetryMaxWaitSeconds:      ptr(p.SDKRetryAfterCapMs / 1000),
		ProbeThrottleMs:             &p.ProbeThrottleMs,
		NearExpiryMarginMs:          &p.NearExpiryMarginMs,
		TransientProbesPerProvider:  &p.TransientProbesPerProvider,
		AutoOverrideProbeIntervalMs: &p.AutoOverrideProbeIntervalMs,
		ChainOverloadRetry: &ChainOverloadRetry{
			Rounds:        &p.ChainOverloadRounds,
			BaseMs:        &p.ChainOverloadBaseMs,
			MaxMs:         &p.ChainOverloadMaxMs,
			NoticeAfterMs: &p.ChainOverloadNoticeAfterMs,
		},
		LoopLimit: &LoopLimit{
			Base:       &p.LoopLimitBase,
			PerProfile: &p.LoopLimitPerProfile,
			Min:        &p.LoopLimitMin,
			Max:        &p.LoopLimitMax,
		},
	}
}

// canonicalProfiles is auth.profiles keyed by id, an expiry (when set)
// as its JSON number.
func canonicalProfiles(profiles []policy.Profile) map[string]ProfileEntry {
	out := make(map[string]ProfileEntry, len(profiles))
	for _, pr := range profiles {
		e := ProfileEntry{Provider: pr.Provider, Type: pr.Type, InlineKey: pr.InlineKey}
		if pr.ExpiresAt != 0 {
			e.Expires, _ = json.Marshal(pr.ExpiresAt)
		}
		out[pr.ID] = e
	}
	return out
}

// canonicalAgents is agents.entries: each agent's model as the object form
// when it gives fallbacks (a list, never null), else as the bare primary
// string, so the two spellings of an agent's model stay distinct.
func canonicalAgents(agents map[string]policy.AgentModel) (map[string]AgentEntry, error) {
	out := make(map[string]AgentEntry, len(agents))
	for id, a := range agents {
		var raw []byte
		var err error
		if a.HasFallbacks {
			raw, err = json.Marshal(ModelSpec{Primary: a.Primary.String(), Fallbacks: nonNil(refStrings(a.Fallbacks))})
		} else {
			raw, err = json.Marshal(a.Primary.String())
		}
		if err != nil {
			return nil, fmt.Errorf("config: canonical model of agent %s: %w", id, err)
		}
		out[id] = AgentEntry{Model: raw}
	}
	return out, nil
}

func refStrings(refs []events.ModelRef) []string {
	if refs == nil {
		return nil
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.String()
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func ptr[T any](v T) *T { return &v }
