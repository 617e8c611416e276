package classify

import "time"

// Result is the classification of one [ProviderError]. Its JSON form is the
// `fledger classify` output line (without the id).
type Result struct {
	// Reason is never empty: one of the sixteen reasons.
	Reason Reason `json:"reason"`
	// Status is the provider's own HTTP status when known (explicit, or the
	// leading status of the message, or the first status in the cause chain);
	// otherwise Reason.Status(); 0 when neither exists. POLICY.md: "A
	// provider's own HTTP status is always kept as the visible status."
	Status int `json:"status"`
	// Disposition is what the failover loop may do next.
	Disposition Disposition `json:"disposition"`
	// RetryAfterMs is the provider's requested wait in milliseconds, 0 when it
	// gave none. Sources, first found wins: headers retry-after-ms,
	// x-ms-retry-after-ms, retry-after (seconds or HTTP date), exhausted
	// *-ratelimit-*-reset headers; then body text ("try again in 50.6s",
	// "Please retry in 20s", "retryDelay": "3s"). Values are rounded up to a
	// whole millisecond and capped at one year.
	RetryAfterMs int64 `json:"retry_after_ms"`
	// RequestSizeCeiling is set when the failure is a provider request-size
	// ceiling (TPM/TPD text stating limit X and requested Y > X): Reason is
	// context_overflow and Disposition failover (POLICY.md).
	RequestSizeCeiling *Ceiling `json:"request_size_ceiling"`
	// Reset is the moment the provider says its usage window reopens, nil
	// when it did not say (or the failure is not a rate_limit). See
	// reset.go for the sources and their order.
	Reset *Reset `json:"reset,omitempty"`
	// LongWindow is set when a rate_limit is a long usage window (daily,
	// weekly, monthly, a subscription's window, "hit your limit"): same-
	// model retries are pointless and the failover loop rotates at once
	// (reference §9). nil for short windows and other reasons.
	LongWindow *Window `json:"long_window,omitempty"`
	// Evidence says which rule decided Reason and what it matched.
	Evidence Evidence `json:"evidence"`
}

// Reset sources ([Reset.Source]; the profile's blockedSource).
const (
	// ResetCodex: Codex usage_limit_reached JSON, resets_at or
	// resets_in_seconds (OpenClaw's blockedSource "codex_rate_limits").
	ResetCodex = "codex_rate_limits"
	// ResetHeader: an exhausted window's rate-limit reset header
	// (x-ratelimit-reset-requests/-tokens, anthropic-ratelimit-*-reset,
	// ratelimit-reset).
	ResetHeader = "reset_header"
	// ResetText: a reset time written in the message ("resets Feb 7,
	// 11am", "try again after July 3, 2026 at 2:45 PM").
	ResetText = "reset_text"
	// ResetRetryAfter: the retry-after of a long-window limit ("429
	// subscription usage limit. Retry after 108000 seconds.").
	ResetRetryAfter = "provider_retry_after"
)

// Reset is a provider-reported end of a usage window.
type Reset struct {
	// At is the reset, UTC, truncated to the millisecond. A relative value
	// (resets_in_seconds, a duration header, a retry-after) is added to the
	// decision time passed to [ClassifyAt], never to the wall clock.
	At time.Time `json:"at"`
	// Source is one of ResetCodex, ResetHeader, ResetText, ResetRetryAfter.
	Source string `json:"source"`
	// Field is where it was read: "message#error.resets_in_seconds",
	// "headers.x-ratelimit-reset-tokens", "message", "cause[1].body", …
	Field string `json:"field"`
	// Match is the value or phrase as written (redacted, ≤ 160 runes).
	Match string `json:"match"`
	// ZoneUnknown is set for a reset text that names no zone fledger can
	// apply: it was read as UTC.
	ZoneUnknown bool `json:"zone_unknown,omitempty"`
}

// Window kinds ([Window.Kind]).
const (
	WindowDaily        = "daily"
	WindowWeekly       = "weekly"
	WindowMonthly      = "monthly"
	WindowSubscription = "subscription"
	WindowUsageLimit   = "usage_limit"
)

// Window is the evidence that a rate limit is a long usage window.
type Window struct {
	// Kind is daily | weekly | monthly | subscription | usage_limit.
	Kind string `json:"kind"`
	// Field and Match are where and what matched (redacted, ≤ 160 runes).
	Field string `json:"field"`
	Match string `json:"match"`
}

// Ceiling is a provider quota smaller than the request: the refusing
// provider's per-window token limit, not the model's context window.
type Ceiling struct {
	// LimitTokens is the provider's stated limit (X).
	LimitTokens int64 `json:"limit_tokens"`
	// RequestedTokens is what the request needed (Y > X).
	RequestedTokens int64 `json:"requested_tokens"`
}

// Evidence explains a classification.
type Evidence struct {
	// Rule is the deciding rule's id, e.g. "msg13.rate_limit" or "status.5xx";
	// docs/classification.md lists every id in order.
	Rule string `json:"rule"`
	// Source is where the rule comes from: "ref §2.2 rule 13", "seed 000
	// Cooldowns", "POLICY Reasons", or "fledger" for our own rules (with the
	// vector that motivated it).
	Source string `json:"source"`
	// Field is what matched: "status", "code", "type", "message", "body",
	// "headers.<name>", a JSON path inside a field ("message#error.type"), or
	// any of these under a cause ("cause[2].message").
	Field string `json:"field,omitempty"`
	// Match is the matched phrase or value, redacted and cut to 160 runes.
	// For unclassified it is the redacted preview of the message.
	Match string `json:"match,omitempty"`
	// RetryAfter names the field RetryAfterMs came from, when set.
	RetryAfter string `json:"retry_after,omitempty"`
	// Disposition explains a refusal, abort or coordination disposition, which
	// is decided separately from the reason.
	Disposition *Evidence `json:"disposition,omitempty"`
	// CauseTruncated is set when the input's JSON nested more causes than
	// [MaxDecodedCauses]: the deeper ones were dropped at decode time and
	// never classified.
	CauseTruncated bool `json:"cause_truncated,omitempty"`
}
