package config

import (
	"encoding/json"

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
func canonical(c policy.Config, format int) ([]byte, error) {
	p := c.Params
	f := File{
		Auth: &AuthSection{
			Cooldowns: &Cooldowns{
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
			},
		},
		Agents: &AgentsSection{},
		Retry: &RetrySection{Provider: &ProviderRetry{
			MaxRetries:        &p.MaxRetries,
			BackoffBaseMs:     &p.RetryBackoffBaseMs,
			BackoffMaxMs:      &p.RetryBackoffMaxMs,
			WindowMs:          &p.RetryWindowMs,
			RateLimitRetryCap: &p.RateLimitRetryCap,
			JitterMin:         &p.JitterMin,
			JitterMax:         &p.JitterMax,
		}},
		Failover: &FailoverSection{
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
		},
	}
	if format >= 3 {
		f.Auth.Cooldowns.SubscriptionBlockMaxMs = &p.SubscriptionBlockMaxMs
		f.Retry.Provider.MaxRetryDelayMs = &p.MaxRetryDelayMs
	}
	if len(c.Profiles) > 0 {
		f.Auth.Profiles = make(map[string]ProfileEntry, len(c.Profiles))
		for _, pr := range c.Profiles {
			e := ProfileEntry{Provider: pr.Provider, Type: pr.Type, InlineKey: pr.InlineKey}
			if pr.ExpiresAt != 0 {
				e.Expires, _ = json.Marshal(pr.ExpiresAt)
			}
			f.Auth.Profiles[pr.ID] = e
		}
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
		f.Agents.Entries = make(map[string]AgentEntry, len(c.Agents))
		for id, a := range c.Agents {
			var raw []byte
			var err error
			if a.HasFallbacks {
				raw, err = json.Marshal(ModelSpec{Primary: a.Primary.String(), Fallbacks: nonNil(refStrings(a.Fallbacks))})
			} else {
				raw, err = json.Marshal(a.Primary.String())
			}
			if err != nil {
				return nil, err
			}
			f.Agents.Entries[id] = AgentEntry{Model: raw}
		}
	}
	return json.Marshal(f)
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
