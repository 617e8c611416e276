package events

// ProviderReset is a provider-reported end of a usage window, as the
// classifier read it (commands/classify Result.Reset): when the window
// reopens and where that was written. Recorded since AttemptFailed v2 and
// ProfileFailureRecorded v2 (issue 17: a rate limit carrying a reset
// blocks the profile until exactly that moment).
type ProviderReset struct {
	// At is the reset, Unix ms. A relative value (resets_in_seconds, a
	// duration header, a retry-after) was added to the decision time.
	At int64 `json:"at"`
	// Source is where the reset came from, the profile's blockedSource:
	// codex_rate_limits (Codex usage_limit_reached resets_at /
	// resets_in_seconds), reset_header (an exhausted window's rate-limit
	// reset header), reset_text ("resets Feb 7, 11am"), provider_retry_after
	// (the retry-after of a long-window limit).
	Source string `json:"source" enum:"codex_rate_limits|reset_header|reset_text|provider_retry_after"`
	// Field is the error field it was read from ("message",
	// "headers.x-ratelimit-reset-tokens", "cause[1].body", …).
	Field string `json:"field,omitempty"`
	// Match is the value or phrase as written, redacted.
	Match string `json:"match,omitempty"`
	// ZoneUnknown is true for a reset text naming no zone fledger can
	// apply: it was read as UTC.
	ZoneUnknown bool `json:"zone_unknown,omitempty"`
}

// UsageWindow is the evidence that a rate limit is a long usage window
// (daily, weekly, monthly, a subscription's window, "hit your limit"):
// same-model retries are skipped and the loop rotates at once (reference
// §9). Recorded since AttemptFailed v2.
type UsageWindow struct {
	// Kind is daily | weekly | monthly | subscription | usage_limit.
	Kind string `json:"kind" enum:"daily|weekly|monthly|subscription|usage_limit"`
	// Field and Match are where and what matched (redacted).
	Field string `json:"field,omitempty"`
	Match string `json:"match,omitempty"`
}
