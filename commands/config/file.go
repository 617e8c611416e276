// Package config reads fledger's failover config file — JSON or YAML with
// OpenClaw's key names — validates it with the path of every problem, and
// turns it into the policy's typed input ([policy.Config]) plus a canonical
// form whose hash names the config in events (ConfigApplied, TurnStarted).
//
// The file shape (every key optional unless noted; durations in ms unless
// the key says otherwise; defaults are POLICY.md's):
//
//	auth:
//	  profiles:                     # id → metadata; never secrets
//	    "openai:user@example.com": {provider: openai, type: oauth, expires: "2026-12-01T00:00:00Z"}
//	    "openai:api-key-backup":   {provider: openai, type: api_key, inlineKey: true}
//	  order:
//	    openai: ["openai:user@example.com", "openai:api-key-backup"]
//	  cooldowns:
//	    rateLimit: ladder           # ladder (seeds) | exponential (OpenClaw 2026.9.6)
//	    resetOnExpiry: false        # true = OpenClaw 2026.9.6 counter reset
//	    ladderMs: [30000, 60000, 300000]
//	    subscriptionBlockMaxMs: 604800000  # a provider reset blocks at most 7 days
//	    ...
//	agents:
//	  defaults:
//	    model: {primary: anthropic/claude-opus-4-6, fallbacks: [openai/gpt-5]}
//	  entries:
//	    coder: {model: openai/gpt-5}            # string: strict agent primary
//	    helper: {model: {primary: openai/gpt-5, fallbacks: []}}
//	retry:
//	  provider: {maxRetries: 3, maxRetryDelayMs: 10000}
//	failover:
//	  skipTtlMs: 0
//	  sdkRetryMaxWaitSeconds: 60
//	  formatAdvances: false       # true = OpenClaw 2026.9.6 (a format error advances)
//
// docs/policy.md lists every key with its default and source; the JSON
// Schema is schemas/config.v1.json.
package config

import "encoding/json"

// File is the config file as written. Pointer fields distinguish "absent"
// (take the default) from an explicit zero.
type File struct {
	// CanonicalVersion is the canonical format (see [CanonicalVersion]):
	// written first in every canonical form from format 2 on; a file
	// leaves it out or gives the current one.
	CanonicalVersion *int             `json:"canonicalVersion,omitempty"`
	Auth             *AuthSection     `json:"auth,omitempty"`
	Agents           *AgentsSection   `json:"agents,omitempty"`
	Retry            *RetrySection    `json:"retry,omitempty"`
	Failover         *FailoverSection `json:"failover,omitempty"`
}

// AuthSection is the file's auth key.
type AuthSection struct {
	// Profiles maps a profile id to its metadata (auth.profiles).
	Profiles map[string]ProfileEntry `json:"profiles,omitempty"`
	// Order maps a provider to its explicit profile order (auth.order).
	Order map[string][]string `json:"order,omitempty"`
	// Cooldowns holds the cooldown and disable numbers (auth.cooldowns).
	Cooldowns *Cooldowns `json:"cooldowns,omitempty"`
}

// ProfileEntry is auth.profiles.<id>.
type ProfileEntry struct {
	Provider string `json:"provider"`
	// Type is oauth | token | api_key.
	Type string `json:"type"`
	// Expires is the credential's expiry: RFC 3339 text or Unix ms.
	Expires json.RawMessage `json:"expires,omitempty"`
	// InlineKey marks a configured inline API key.
	InlineKey bool `json:"inlineKey,omitempty"`
}

// Cooldowns is auth.cooldowns. The *Hours keys are OpenClaw's older names
// (billingBackoffHours, billingMaxHours, failureWindowHours) and are
// accepted as aliases of the *Ms keys; giving both is an error.
type Cooldowns struct {
	LadderMs                         []int64  `json:"ladderMs,omitempty"`
	RateLimit                        *string  `json:"rateLimit,omitempty"`
	RateLimitBaseMs                  *int64   `json:"rateLimitBaseMs,omitempty"`
	RateLimitMaxMs                   *int64   `json:"rateLimitMaxMs,omitempty"`
	BillingBackoffMs                 *int64   `json:"billingBackoffMs,omitempty"`
	BillingMaxMs                     *int64   `json:"billingMaxMs,omitempty"`
	BillingBackoffHours              *float64 `json:"billingBackoffHours,omitempty"`
	BillingMaxHours                  *float64 `json:"billingMaxHours,omitempty"`
	AuthPermanentBackoffMs           *int64   `json:"authPermanentBackoffMs,omitempty"`
	AuthPermanentMaxMs               *int64   `json:"authPermanentMaxMs,omitempty"`
	FailureWindowMs                  *int64   `json:"failureWindowMs,omitempty"`
	FailureWindowHours               *float64 `json:"failureWindowHours,omitempty"`
	ResetOnExpiry                    *bool    `json:"resetOnExpiry,omitempty"`
	InlineKeyBillingMs               *int64   `json:"inlineKeyBillingMs,omitempty"`
	ClearOtherModelCooldownOnSuccess *bool    `json:"clearOtherModelCooldownOnSuccess,omitempty"`
	AutoPinSurvivesCompaction        *bool    `json:"autoPinSurvivesCompaction,omitempty"`
	RateLimitedProfileRotations      *int     `json:"rateLimitedProfileRotations,omitempty"`
	OverloadedProfileRotations       *int     `json:"overloadedProfileRotations,omitempty"`
	NeverCooldownProviders           []string `json:"neverCooldownProviders,omitempty"`
	// SubscriptionBlockMaxMs bounds a block until a provider-reported
	// reset (canonical format 3 on).
	SubscriptionBlockMaxMs *int64 `json:"subscriptionBlockMaxMs,omitempty"`
}

// AgentsSection is the file's agents key.
type AgentsSection struct {
	Defaults *AgentDefaults        `json:"defaults,omitempty"`
	Entries  map[string]AgentEntry `json:"entries,omitempty"`
}

// AgentDefaults is agents.defaults.
type AgentDefaults struct {
	Model *ModelSpec `json:"model,omitempty"`
}

// AgentEntry is agents.entries.<id>.
type AgentEntry struct {
	// Model is a "provider/model" string or {primary, fallbacks}.
	Model json.RawMessage `json:"model,omitempty"`
}

// ModelSpec is a {primary, fallbacks} model object. Fallbacks nil means
// the key was absent; an empty list means explicitly strict.
type ModelSpec struct {
	Primary   string   `json:"primary"`
	Fallbacks []string `json:"fallbacks"`
}

// RetrySection is the file's retry key.
type RetrySection struct {
	Provider *ProviderRetry `json:"provider,omitempty"`
}

// ProviderRetry is retry.provider: same-model transient retries.
type ProviderRetry struct {
	MaxRetries        *int     `json:"maxRetries,omitempty"`
	BackoffBaseMs     *int64   `json:"backoffBaseMs,omitempty"`
	BackoffMaxMs      *int64   `json:"backoffMaxMs,omitempty"`
	WindowMs          *int64   `json:"windowMs,omitempty"`
	RateLimitRetryCap *int     `json:"rateLimitRetryCap,omitempty"`
	JitterMin         *float64 `json:"jitterMin,omitempty"`
	JitterMax         *float64 `json:"jitterMax,omitempty"`
	// MaxRetryDelayMs: a longer rate-limit wait rotates instead of
	// sleeping (canonical format 3 on).
	MaxRetryDelayMs *int64 `json:"maxRetryDelayMs,omitempty"`
}

// FailoverSection is the file's failover key: the fallback runner's probe,
// skip and limit numbers (OpenClaw keeps these in environment variables or
// constants; reference §7, §9, §11).
type FailoverSection struct {
	SkipTTLMs                   *int64              `json:"skipTtlMs,omitempty"`
	SDKRetryMaxWaitSeconds      *int64              `json:"sdkRetryMaxWaitSeconds,omitempty"`
	ProbeThrottleMs             *int64              `json:"probeThrottleMs,omitempty"`
	NearExpiryMarginMs          *int64              `json:"nearExpiryMarginMs,omitempty"`
	TransientProbesPerProvider  *int                `json:"transientProbesPerProvider,omitempty"`
	AutoOverrideProbeIntervalMs *int64              `json:"autoOverrideProbeIntervalMs,omitempty"`
	ChainOverloadRetry          *ChainOverloadRetry `json:"chainOverloadRetry,omitempty"`
	LoopLimit                   *LoopLimit          `json:"loopLimit,omitempty"`
	// FormatAdvances: a format (invalid-request) error advances to the
	// next candidate, as OpenClaw 2026.9.6 does; default false, the seeds'
	// terminal format error (canonical format 4 on).
	FormatAdvances *bool `json:"formatAdvances,omitempty"`
}

// ChainOverloadRetry is failover.chainOverloadRetry (seed 003).
type ChainOverloadRetry struct {
	Rounds        *int   `json:"rounds,omitempty"`
	BaseMs        *int64 `json:"baseMs,omitempty"`
	MaxMs         *int64 `json:"maxMs,omitempty"`
	NoticeAfterMs *int64 `json:"noticeAfterMs,omitempty"`
}

// LoopLimit is failover.loopLimit: min(max, max(min, base + perProfile ×
// max(1, profiles))).
type LoopLimit struct {
	Base       *int `json:"base,omitempty"`
	PerProfile *int `json:"perProfile,omitempty"`
	Min        *int `json:"min,omitempty"`
	Max        *int `json:"max,omitempty"`
}
