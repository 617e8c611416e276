package policy

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fledger/fledger/events"
)

// Rate-limit cooldown modes for [Params.RateLimitMode].
const (
	// RateLimitLadder puts rate_limit on the regular ladder (30 s, 60 s,
	// 300 s). Seed 000 "Cooldowns"; POLICY "Cooldowns and disables". Default.
	RateLimitLadder = "ladder"
	// RateLimitExponential doubles rate-limit cooldowns from
	// RateLimitBaseMs to RateLimitMaxMs on failureCounts.rate_limit
	// (OpenClaw 2026.9.6, reference §3).
	RateLimitExponential = "exponential"
)

// Params holds every number and switch of the failover policy. Durations are
// milliseconds, counts are plain ints. [DefaultParams] returns the POLICY.md
// defaults; the config parser (commands/config) overlays the file's values
// and calls [Params.Validate].
//
// The "key" in each comment is the config key the value is read from. Keys
// under auth.cooldowns.* are fledger's (OpenClaw 2026.9.6 hard-codes these
// numbers, reference §3 last bullet); rateLimit and resetOnExpiry are the two
// switches POLICY.md names.
type Params struct {
	// CooldownLadderMs is the regular cooldown by errorCount: entry i is the
	// cooldown for errorCount i+1, the last entry is the cap. Default
	// [30000, 60000, 300000]. Seed 000 "Cooldowns". Key
	// auth.cooldowns.ladderMs.
	CooldownLadderMs []int64
	// RateLimitMode is RateLimitLadder (default, seeds) or
	// RateLimitExponential (OpenClaw 2026.9.6). Key auth.cooldowns.rateLimit.
	RateLimitMode string
	// RateLimitBaseMs and RateLimitMaxMs bound the exponential rate-limit
	// cooldown: base × 2^(n−1) capped at max. Defaults 30000 / 86400000
	// (reference §3). Keys auth.cooldowns.rateLimitBaseMs / rateLimitMaxMs.
	RateLimitBaseMs int64
	RateLimitMaxMs  int64
	// BillingBaseMs and BillingMaxMs bound the billing disable: 10 min
	// doubling per billing failure since the last reset, cap 24 h. Defaults
	// 600000 / 86400000. Seed 000 "Billing disables"; reference §3. Keys
	// auth.cooldowns.billingBackoffMs / billingMaxMs.
	BillingBaseMs int64
	BillingMaxMs  int64
	// AuthPermanentBaseMs and AuthPermanentMaxMs bound the auth_permanent
	// disable: 10 min doubling, cap 1 h. Defaults 600000 / 3600000.
	// Keys auth.cooldowns.authPermanentBackoffMs / authPermanentMaxMs.
	AuthPermanentBaseMs int64
	AuthPermanentMaxMs  int64
	// FailureWindowMs: errorCount and failureCounts restart when more than
	// this has passed since lastFailureAt. Default 86400000 (24 h). Seed 000
	// "Counters reset once the profile's built-in failure window has
	// passed". Key auth.cooldowns.failureWindowMs.
	FailureWindowMs int64
	// ResetOnExpiry also restarts the counters whenever the previous
	// unusable window has expired (OpenClaw 2026.9.6, reference §3 step 2).
	// Default false (seeds: counters survive an expired window, so
	// cooldowns escalate 30 s → 1 m → 5 m). Key auth.cooldowns.resetOnExpiry.
	ResetOnExpiry bool
	// InlineKeyBillingWindowMs is the fixed billing disable for configured
	// inline API keys: every billing failure after the window expired starts
	// a fresh window of this length (no doubling). Default 600000. Seed 000
	// "Billing disables". Key auth.cooldowns.inlineKeyBillingMs.
	InlineKeyBillingWindowMs int64
	// ClearOtherModelCooldownOnSuccess makes a success also clear a
	// cooldown scoped to another model (OpenClaw 2026.9.6). Default false
	// (POLICY: a gpt-5-mini answer proves nothing about gpt-5's rate limit).
	// Key auth.cooldowns.clearOtherModelCooldownOnSuccess.
	ClearOtherModelCooldownOnSuccess bool
	// SubscriptionBlockMaxMs bounds a subscription block: a rate_limit that
	// carries a provider reset (Codex resets_in_seconds / resets_at, an
	// exhausted window's reset header, "resets Feb 7, 11am") blocks the
	// profile until exactly that reset (blockedUntil, blockedReason
	// subscription_limit, scoped to the model when known) instead of the
	// ladder step, but never longer than this after the failure. 0 =
	// provider resets are not honoured (the ladder applies; what a config
	// stored before canonical format 3 means). Default 604800000 (7 days:
	// a Codex weekly window fits). Issue 17; seed 000 "OpenAI Codex
	// subscription plus API-key backup"; reference §3 "Subscription
	// blocks". Key auth.cooldowns.subscriptionBlockMaxMs.
	SubscriptionBlockMaxMs int64
	// NeverCooldownProviders never record failures nor cool down
	// (reference §3: openrouter, kilocode). Compared exactly, sorted. Key
	// auth.cooldowns.neverCooldownProviders.
	NeverCooldownProviders []string
	// AutoPinSurvivesCompaction keeps an automatic auth pin across a
	// completed compaction (OpenClaw 2026.9.6 docs, reference §5). Default
	// false: seed 000 "Session stickiness" rotates/clears an auto pin when
	// a compaction completes. Key auth.cooldowns.autoPinSurvivesCompaction.
	AutoPinSurvivesCompaction bool

	// MaxRetries is the same-model transient retry budget per candidate.
	// Default 3 (seed 000; OpenClaw 2026.9.6 ships 8, or 9 for rate limits).
	// 0 disables retries. Key retry.provider.maxRetries.
	MaxRetries int
	// RetryBackoffBaseMs, RetryBackoffMaxMs: retry k waits
	// min(max, base × 2^(k−1)) × jitter, capped at max. Defaults 1000 /
	// 30000 (reference §9). Keys retry.provider.backoffBaseMs / backoffMaxMs.
	RetryBackoffBaseMs int64
	RetryBackoffMaxMs  int64
	// JitterMin and JitterMax bound the jitter factor, drawn uniformly in
	// [JitterMin, JitterMax) from the recorded seed, in integer parts per
	// million (see [Params.JitteredDelay]). Defaults 0.5 / 1.5. Keys
	// retry.provider.jitterMin / jitterMax.
	JitterMin float64
	JitterMax float64
	// RetryWindowMs is the fixed window non-rate-limit retries must fit in,
	// starting at the first retry. Default 90000. Seed 000; reference §9.
	// Key retry.provider.windowMs.
	RetryWindowMs int64
	// MaxRetryDelayMs: a rate limit whose provider wait (its retry-after,
	// or the time to its reset) is longer than this is not retried on the
	// same profile when another profile or a later candidate can take the
	// call; it rotates at once instead of sleeping. 0 = no such limit (what
	// a config stored before canonical format 3 means). Default 10000.
	// Reference §9 ("rejected for rate_limit when fallbacks are configured
	// and retry-after exceeds retry.provider.maxRetryDelayMs"). Key
	// retry.provider.maxRetryDelayMs.
	MaxRetryDelayMs int64
	// RateLimitRetryCap caps the budget once a rate limit was seen on the
	// candidate (9 retries = 10 attempts). Default 9. Reference §9. Key
	// retry.provider.rateLimitRetryCap.
	RateLimitRetryCap int
	// RateLimitRotations and OverloadedRotations are the same-provider
	// profile rotations allowed for rate_limit / overloaded before model
	// fallback, when a later candidate exists. Defaults 1 / 1. Seed 000.
	// Keys auth.cooldowns.rateLimitedProfileRotations /
	// overloadedProfileRotations.
	RateLimitRotations  int
	OverloadedRotations int

	// ChainOverloadRounds is how many times the whole chain is retried when
	// every candidate failed only with overloaded. Default 10. Seed 003.
	// 0 = OpenClaw 2026.9.6 (no whole-chain retry). Key
	// failover.chainOverloadRetry.rounds.
	ChainOverloadRounds int
	// ChainOverloadBaseMs, ChainOverloadMaxMs: round r (1-based) waits
	// min(max, base × 2^(r−1)). Defaults 2500 / 30000. Seed 003. Keys
	// failover.chainOverloadRetry.baseMs / maxMs.
	ChainOverloadBaseMs int64
	ChainOverloadMaxMs  int64
	// ChainOverloadNoticeAfterMs: once this much was waited in chain
	// retries, one transient notice ([OverloadNoticeText]), at that very
	// moment even when it falls inside a wait. Default 30000. Key
	// failover.chainOverloadRetry.noticeAfterMs.
	ChainOverloadNoticeAfterMs int64

	// ProbeThrottleMs is the minimum time between primary cooldown probes of
	// one provider. Default 30000. Reference §7 step 5, §11. Key
	// failover.probeThrottleMs.
	ProbeThrottleMs int64
	// NearExpiryMarginMs: the primary is probed when now ≥ soonest expiry −
	// margin. Default 120000. Reference §7, §11. Key
	// failover.nearExpiryMarginMs.
	NearExpiryMarginMs int64
	// TransientProbesPerProvider is the number of transient cooldown probes
	// of one provider per fallback run (chain pass). Default 1. Key
	// failover.transientProbesPerProvider.
	TransientProbesPerProvider int
	// SkipCacheTTLMs is the auth-failure skip cache TTL; 0 = off (default);
	// a positive value is clamped to [1000, 600000] (see
	// [Params.EffectiveSkipCacheTTL]). Reference §7 step 4. Key
	// failover.skipTtlMs (OpenClaw: OPENCLAW_FALLBACK_SKIP_TTL_MS).
	SkipCacheTTLMs int64
	// SDKRetryAfterCapMs: a retry-after longer than this is not waited for;
	// the failure surfaces at once and goes to rotation/fallback. 0 = no
	// cap. Default 60000. POLICY. Key failover.sdkRetryMaxWaitSeconds (in
	// seconds, default 60; OpenClaw: OPENCLAW_SDK_RETRY_MAX_WAIT_SECONDS).
	SDKRetryAfterCapMs int64
	// FormatAdvances: a format (invalid-request) error advances to the
	// next candidate, as OpenClaw 2026.9.6 does (reference §12). Default
	// false: the seeds call it terminal (seed 003 lists it among the
	// errors that do not advance; seed 000 "OpenClaw surfaces them instead
	// of rotating auth profiles"), so the turn stops with the provider's
	// error. Read by turns of rule revision 2 on; revision 1 always
	// advanced. Key failover.formatAdvances.
	FormatAdvances bool

	// LoopLimitBase, LoopLimitPerProfile, LoopLimitMin, LoopLimitMax define
	// the inner run-loop limit min(max, max(min, base + perProfile ×
	// max(1, profiles))). Defaults 24, 8, 32, 160. Reference §9. Keys
	// failover.loopLimit.base / perProfile / min / max.
	LoopLimitBase       int
	LoopLimitPerProfile int
	LoopLimitMin        int
	LoopLimitMax        int

	// AutoOverrideProbeIntervalMs: a stored auto override probes its origin
	// this often. Default 300000. Seed 000 "Selection source policy". Key
	// failover.autoOverrideProbeIntervalMs.
	AutoOverrideProbeIntervalMs int64
}

// DefaultParams returns the POLICY.md defaults.
func DefaultParams() Params {
	return Params{
		CooldownLadderMs:            []int64{30000, 60000, 300000},
		RateLimitMode:               RateLimitLadder,
		RateLimitBaseMs:             30000,
		RateLimitMaxMs:              86400000,
		BillingBaseMs:               600000,
		BillingMaxMs:                86400000,
		AuthPermanentBaseMs:         600000,
		AuthPermanentMaxMs:          3600000,
		FailureWindowMs:             86400000,
		InlineKeyBillingWindowMs:    600000,
		SubscriptionBlockMaxMs:      604800000,
		NeverCooldownProviders:      []string{"kilocode", "openrouter"},
		MaxRetries:                  3,
		RetryBackoffBaseMs:          1000,
		RetryBackoffMaxMs:           30000,
		JitterMin:                   0.5,
		JitterMax:                   1.5,
		RetryWindowMs:               90000,
		MaxRetryDelayMs:             10000,
		RateLimitRetryCap:           9,
		RateLimitRotations:          1,
		OverloadedRotations:         1,
		ChainOverloadRounds:         10,
		ChainOverloadBaseMs:         2500,
		ChainOverloadMaxMs:          30000,
		ChainOverloadNoticeAfterMs:  30000,
		ProbeThrottleMs:             30000,
		NearExpiryMarginMs:          120000,
		TransientProbesPerProvider:  1,
		SkipCacheTTLMs:              0,
		SDKRetryAfterCapMs:          60000,
		LoopLimitBase:               24,
		LoopLimitPerProfile:         8,
		LoopLimitMin:                32,
		LoopLimitMax:                160,
		AutoOverrideProbeIntervalMs: 300000,
	}
}

// ErrInvalidParams is wrapped by every [Params.Validate] and
// [Config.Validate] error.
var ErrInvalidParams = errors.New("policy: invalid params")

func invalid(field, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidParams, field, fmt.Sprintf(format, a...))
}

// Validate checks every number and switch; the error names the field and
// wraps [ErrInvalidParams].
func (p Params) Validate() error {
	if len(p.CooldownLadderMs) == 0 {
		return invalid("CooldownLadderMs", "must have at least one step")
	}
	for i, v := range p.CooldownLadderMs {
		if v <= 0 {
			return invalid(fmt.Sprintf("CooldownLadderMs[%d]", i), "%d is not a positive duration", v)
		}
		if i > 0 && v < p.CooldownLadderMs[i-1] {
			return invalid(fmt.Sprintf("CooldownLadderMs[%d]", i), "%d is shorter than the previous step", v)
		}
	}
	if p.RateLimitMode != RateLimitLadder && p.RateLimitMode != RateLimitExponential {
		return invalid("RateLimitMode", "%q is not ladder|exponential", p.RateLimitMode)
	}
	pairs := []struct {
		name      string
		base, max int64
	}{
		{"RateLimit", p.RateLimitBaseMs, p.RateLimitMaxMs},
		{"Billing", p.BillingBaseMs, p.BillingMaxMs},
		{"AuthPermanent", p.AuthPermanentBaseMs, p.AuthPermanentMaxMs},
		{"RetryBackoff", p.RetryBackoffBaseMs, p.RetryBackoffMaxMs},
		{"ChainOverload", p.ChainOverloadBaseMs, p.ChainOverloadMaxMs},
	}
	for _, pr := range pairs {
		if pr.base <= 0 {
			return invalid(pr.name+"BaseMs", "%d is not a positive duration", pr.base)
		}
		if pr.max < pr.base {
			return invalid(pr.name+"MaxMs", "%d is below the base %d", pr.max, pr.base)
		}
	}
	positive := []struct {
		name string
		v    int64
	}{
		{"FailureWindowMs", p.FailureWindowMs},
		{"InlineKeyBillingWindowMs", p.InlineKeyBillingWindowMs},
		{"RetryWindowMs", p.RetryWindowMs},
	}
	for _, f := range positive {
		if f.v <= 0 {
			return invalid(f.name, "%d is not a positive duration", f.v)
		}
	}
	nonNeg := []struct {
		name string
		v    int64
	}{
		{"ChainOverloadNoticeAfterMs", p.ChainOverloadNoticeAfterMs},
		{"ProbeThrottleMs", p.ProbeThrottleMs},
		{"NearExpiryMarginMs", p.NearExpiryMarginMs},
		{"SkipCacheTTLMs", p.SkipCacheTTLMs},
		{"SDKRetryAfterCapMs", p.SDKRetryAfterCapMs},
		{"SubscriptionBlockMaxMs", p.SubscriptionBlockMaxMs},
		{"MaxRetryDelayMs", p.MaxRetryDelayMs},
		{"AutoOverrideProbeIntervalMs", p.AutoOverrideProbeIntervalMs},
		{"MaxRetries", int64(p.MaxRetries)},
		{"RateLimitRetryCap", int64(p.RateLimitRetryCap)},
		{"RateLimitRotations", int64(p.RateLimitRotations)},
		{"OverloadedRotations", int64(p.OverloadedRotations)},
		{"ChainOverloadRounds", int64(p.ChainOverloadRounds)},
		{"TransientProbesPerProvider", int64(p.TransientProbesPerProvider)},
	}
	for _, f := range nonNeg {
		if f.v < 0 {
			return invalid(f.name, "%d is negative", f.v)
		}
	}
	if !(p.JitterMin > 0 && p.JitterMin <= p.JitterMax) {
		return invalid("JitterMin", "need 0 < JitterMin (%g) <= JitterMax (%g)", p.JitterMin, p.JitterMax)
	}
	if p.LoopLimitBase < 0 || p.LoopLimitPerProfile < 0 || p.LoopLimitMin < 1 || p.LoopLimitMax < p.LoopLimitMin {
		return invalid("LoopLimit", "need base, perProfile >= 0 and 1 <= min (%d) <= max (%d)", p.LoopLimitMin, p.LoopLimitMax)
	}
	if !sort.StringsAreSorted(p.NeverCooldownProviders) {
		return invalid("NeverCooldownProviders", "must be sorted")
	}
	return nil
}

// EffectiveSkipCacheTTL returns the skip-cache TTL in force: 0 when off,
// else SkipCacheTTLMs clamped to [1000, 600000] ms (reference §7 step 4).
func (p Params) EffectiveSkipCacheTTL() int64 {
	switch {
	case p.SkipCacheTTLMs <= 0:
		return 0
	case p.SkipCacheTTLMs < 1000:
		return 1000
	case p.SkipCacheTTLMs > 600000:
		return 600000
	}
	return p.SkipCacheTTLMs
}

// Profile types (auth.profiles.<id>.type).
const (
	ProfileOAuth  = "oauth"
	ProfileToken  = "token"
	ProfileAPIKey = "api_key"
)

// Profile is one configured auth profile: metadata and routing only, never a
// secret (seed 000 "Auth storage"). Key auth.profiles.<id>.
type Profile struct {
	// ID is the profile id, e.g. "openai:user@example.com" (the map key).
	ID string
	// Provider is auth.profiles.<id>.provider.
	Provider string
	// Type is auth.profiles.<id>.type: oauth | token | api_key.
	Type string
	// ExpiresAt is the credential's expiry, Unix ms; 0 = none
	// (auth.profiles.<id>.expires). An expired OAuth profile sorts after
	// usable OAuth profiles (reference §5).
	ExpiresAt int64
	// InlineKey marks a configured inline API key (seed 000 "Billing
	// disables": a fresh 10-minute window per billing failure; reference
	// §4: only auth, auth_permanent and billing are recorded).
	InlineKey bool
}

// ModelRef names a provider/model pair.
type ModelRef = events.ModelRef

// Models is a model selection with its fallbacks: agents.defaults.model
// {primary, fallbacks}.
type Models struct {
	// Primary is agents.defaults.model.primary.
	Primary ModelRef
	// Fallbacks is agents.defaults.model.fallbacks, in order.
	Fallbacks []ModelRef
}

// AgentModel is agents.entries.<id>.model: a string (Primary only,
// HasFallbacks false → strict) or {primary, fallbacks}. HasFallbacks is
// true when the object carried a fallbacks key; an empty list then means
// explicitly strict (seed 000 "Selection source policy").
type AgentModel struct {
	Primary      ModelRef
	Fallbacks    []ModelRef
	HasFallbacks bool
}

// Config is the policy's whole input from the config file. Profiles are
// sorted by ID; maps are iterated only in sorted key order.
type Config struct {
	Params
	// Hash is the canonical config hash ("sha256:<hex>") that names the
	// config in TurnStarted.ConfigHash.
	Hash string
	// Profiles is auth.profiles, sorted by ID.
	Profiles []Profile
	// Order is auth.order: provider → profile ids in the operator's order.
	Order map[string][]string
	// Defaults is agents.defaults.model.
	Defaults Models
	// Agents is agents.entries.<id>.model by agent id.
	Agents map[string]AgentModel
}

// Validate checks Params, profile types and sorting, and that every
// auth.order id names a profile of that provider.
func (c Config) Validate() error {
	if err := c.Params.Validate(); err != nil {
		return err
	}
	for i, p := range c.Profiles {
		if p.ID == "" || p.Provider == "" {
			return invalid(fmt.Sprintf("Profiles[%d]", i), "id and provider are required")
		}
		switch p.Type {
		case ProfileOAuth, ProfileToken, ProfileAPIKey:
		default:
			return invalid("auth.profiles."+p.ID+".type", "%q is not oauth|token|api_key", p.Type)
		}
		if i > 0 && c.Profiles[i-1].ID >= p.ID {
			return invalid("Profiles", "not sorted by id or duplicate %q", p.ID)
		}
	}
	for _, prov := range sortedKeys(c.Order) {
		for i, id := range c.Order[prov] {
			p, ok := c.Profile(id)
			if !ok {
				return invalid(fmt.Sprintf("auth.order.%s[%d]", prov, i), "%q is not a configured profile", id)
			}
			if p.Provider != prov {
				return invalid(fmt.Sprintf("auth.order.%s[%d]", prov, i), "%q belongs to provider %q", id, p.Provider)
			}
		}
	}
	return nil
}

// Profile returns the configured profile with the given id.
func (c Config) Profile(id string) (Profile, bool) {
	i := sort.Search(len(c.Profiles), func(i int) bool { return c.Profiles[i].ID >= id })
	if i < len(c.Profiles) && c.Profiles[i].ID == id {
		return c.Profiles[i], true
	}
	return Profile{}, false
}

// ProviderProfiles returns the configured profiles of provider, by id.
func (c Config) ProviderProfiles(provider string) []Profile {
	var out []Profile
	for _, p := range c.Profiles {
		if p.Provider == provider {
			out = append(out, p)
		}
	}
	return out
}

// DefaultConfig returns a Config with DefaultParams and nothing else.
func DefaultConfig() Config { return Config{Params: DefaultParams()} }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
