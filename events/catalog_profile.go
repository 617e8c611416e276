package events

// ProfileFailureRecorded records one failure counted against an auth
// profile and the usageStats that result (reference §3
// computeNextProfileUsageStats, POLICY "Cooldowns and disables"). The
// fields after Reason are the resulting state, not deltas, so evolve is a
// copy and replay can compare a re-decision field by field. Times are Unix
// ms UTC; 0 means unset. Version 2 adds the subscription block
// (blocked_*, reset, block_bounded); a v1 event has none (upcast
// unchanged: no block).
type ProfileFailureRecorded struct {
	ProfileID string `json:"profile_id"`
	Provider  string `json:"provider"`
	// Model is the model the failing attempt ran ("" when unknown).
	Model string `json:"model,omitempty"`
	// Reason is the classified failover reason (one of the 16 names).
	Reason string `json:"reason" enum:"reason"`
	// TurnID and Attempt name the attempt that failed ("" / 0 for a failure
	// reported outside a turn).
	TurnID  string `json:"turn_id,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// CountersReset is true when errorCount and failureCounts restarted
	// before this failure was counted (failure window passed, or
	// resetOnExpiry and the previous window had expired).
	CountersReset bool `json:"counters_reset"`
	// WindowKept is true when an active cooldown or disable window was left
	// at its existing deadline (seed 004: never extended by a new failure).
	WindowKept bool `json:"window_kept"`
	// Resulting usageStats.
	ErrorCount     int            `json:"error_count"`
	FailureCounts  map[string]int `json:"failure_counts"`
	LastFailureAt  int64          `json:"last_failure_at"`
	CooldownUntil  int64          `json:"cooldown_until,omitempty"`
	CooldownReason string         `json:"cooldown_reason,omitempty" enum:"reason"`
	CooldownModel  string         `json:"cooldown_model,omitempty"`
	DisabledUntil  int64          `json:"disabled_until,omitempty"`
	DisabledReason string         `json:"disabled_reason,omitempty" enum:"reason"`
	// BlockedUntil, BlockedReason, BlockedSource, BlockedModel: the
	// subscription block (v2; reference §3 markAuthProfileBlockedUntil,
	// §4): until when the provider said the profile's usage window is
	// closed, why (subscription_limit), where the reset came from, and the
	// model it is scoped to ("" = every model).
	BlockedUntil  int64  `json:"blocked_until,omitempty"`
	BlockedReason string `json:"blocked_reason,omitempty" enum:"subscription_limit"`
	BlockedSource string `json:"blocked_source,omitempty" enum:"codex_rate_limits|reset_header|reset_text|provider_retry_after"`
	BlockedModel  string `json:"blocked_model,omitempty"`
	// Reset is the provider's reset this failure carried, with its
	// evidence, when it set or moved the block (v2).
	Reset *ProviderReset `json:"reset,omitempty"`
	// BlockBounded is true when the provider's reset lay beyond
	// auth.cooldowns.subscriptionBlockMaxMs and the block ends at now +
	// that maximum instead (v2).
	BlockBounded bool `json:"block_bounded,omitempty"`
}

func (ProfileFailureRecorded) EventType() string         { return "ProfileFailureRecorded" }
func (ProfileFailureRecorded) EventAggregate() Aggregate { return AggProfile }
func (e ProfileFailureRecorded) EventKey() string        { return e.ProfileID }

// ProfileSucceeded records a successful call on a profile: lastUsed is set
// and the failure fields are cleared, except a cooldown scoped to another
// model, which stays (POLICY "Cooldowns and disables"; OpenClaw 2026.9.6
// clears it too, config clearOtherModelCooldownOnSuccess), and so does a
// subscription block scoped to another model. Version 2 adds the
// kept_blocked_* fields; a v1 event has none (upcast unchanged).
type ProfileSucceeded struct {
	ProfileID string `json:"profile_id"`
	Provider  string `json:"provider"`
	Model     string `json:"model,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	// LastUsed is the success time, Unix ms.
	LastUsed int64 `json:"last_used"`
	// Kept* describe a cooldown on another model that survives the success.
	KeptCooldownUntil  int64  `json:"kept_cooldown_until,omitempty"`
	KeptCooldownReason string `json:"kept_cooldown_reason,omitempty"`
	KeptCooldownModel  string `json:"kept_cooldown_model,omitempty"`
	// KeptFailureCounts are the counters that survive (those of the kept
	// cooldown's reason), nil when everything was cleared.
	KeptFailureCounts map[string]int `json:"kept_failure_counts,omitempty"`
	KeptErrorCount    int            `json:"kept_error_count,omitempty"`
	// KeptLastFailureAt is the lastFailureAt that survives with a kept
	// cooldown (Unix ms, 0 when everything was cleared), so the failure
	// window still applies to the kept counters.
	KeptLastFailureAt int64 `json:"kept_last_failure_at,omitempty"`
	// KeptBlocked* describe a subscription block scoped to another model
	// that survives the success (v2): a gpt-5-mini answer proves nothing
	// about gpt-5's usage window.
	KeptBlockedUntil  int64  `json:"kept_blocked_until,omitempty"`
	KeptBlockedReason string `json:"kept_blocked_reason,omitempty" enum:"subscription_limit"`
	KeptBlockedSource string `json:"kept_blocked_source,omitempty" enum:"codex_rate_limits|reset_header|reset_text|provider_retry_after"`
	KeptBlockedModel  string `json:"kept_blocked_model,omitempty"`
}

func (ProfileSucceeded) EventType() string         { return "ProfileSucceeded" }
func (ProfileSucceeded) EventAggregate() Aggregate { return AggProfile }
func (e ProfileSucceeded) EventKey() string        { return e.ProfileID }

// ProfileUsed records a successful call on a profile that had no failure
// state for the success to clear (errorCount 0, no cooldown, no disable):
// only lastUsed moves. It changes no failure field, so it commutes with
// every other event of the profile — a failure another turn records at the
// same moment is never undone by it — and needs no guard: successes on a
// hot profile never conflict (docs/engine.md "Subjects and consistency").
// A success that does clear something is a [ProfileSucceeded].
type ProfileUsed struct {
	ProfileID string `json:"profile_id"`
	Provider  string `json:"provider"`
	Model     string `json:"model,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
	// LastUsed is the success time, Unix ms. The profile's lastUsed becomes
	// the later of its own and this one.
	LastUsed int64 `json:"last_used"`
}

func (ProfileUsed) EventType() string         { return "ProfileUsed" }
func (ProfileUsed) EventAggregate() Aggregate { return AggProfile }
func (e ProfileUsed) EventKey() string        { return e.ProfileID }

// ProfileCleared records an operator clearing a profile's failure state,
// e.g. after a recharge (seed 000 "Billing disables": recharging does not
// itself clear persisted state). All failure fields reset; lastUsed stays.
type ProfileCleared struct {
	ProfileID string `json:"profile_id"`
	Provider  string `json:"provider,omitempty"`
	// By names who cleared it (operator name, "cli", "api").
	By string `json:"by,omitempty"`
	// Note is a free-text reason, redacted before it is stored.
	Note string `json:"note,omitempty"`
}

func (ProfileCleared) EventType() string         { return "ProfileCleared" }
func (ProfileCleared) EventAggregate() Aggregate { return AggProfile }
func (e ProfileCleared) EventKey() string        { return e.ProfileID }
