package events

import "encoding/json"

// Examples returns one realistic, filled-in payload of every type in
// [Catalog], in catalog order. Tests validate them against the schemas,
// docs/events.md shows them, and benchmarks append them. Times are Unix ms
// around 2026-01-15T10:00:00Z.
func Examples() []Payload {
	const t0 = int64(1768471200000) // 2026-01-15T10:00:00Z
	gpt := ModelRef{Provider: "openai", Model: "gpt-5"}
	claude := ModelRef{Provider: "anthropic", Model: "claude-sonnet-4-5"}
	return []Payload{
		ConfigApplied{
			Hash:     "sha256:9f2c4b1e7a0d3c5b8e6f1a2d4c7b9e0f3a5c8d1b6e4f7a2c9d0b3e5f8a1c4d7b",
			Config:   json.RawMessage(`{"auth":{"cooldowns":{"failureWindowHours":24}},"models":{"primary":"openai/gpt-5","fallbacks":["anthropic/claude-sonnet-4-5"]}}`),
			Source:   "/etc/fledger/config.yaml",
			Warnings: []string{`unknown key "auth.cooldown.foo"`},
		},
		ProfileFailureRecorded{
			ProfileID: "openai:user@example.com", Provider: "openai", Model: "gpt-5",
			Reason: "rate_limit", TurnID: "turn-01JH8Z", Attempt: 2,
			CountersReset: false, WindowKept: false,
			ErrorCount: 2, FailureCounts: map[string]int{"rate_limit": 2},
			LastFailureAt: t0 + 1500, CooldownUntil: t0 + 1500 + 300000,
			CooldownReason: "rate_limit", CooldownModel: "gpt-5",
		},
		ProfileSucceeded{
			ProfileID: "openai:user@example.com", Provider: "openai", Model: "gpt-5-mini",
			TurnID: "turn-01JH8Z", Attempt: 3, LastUsed: t0 + 4200,
			KeptCooldownUntil: t0 + 301500, KeptCooldownReason: "rate_limit", KeptCooldownModel: "gpt-5",
			KeptFailureCounts: map[string]int{"rate_limit": 2}, KeptErrorCount: 2,
		},
		ProfileCleared{ProfileID: "anthropic:ops@example.com", Provider: "anthropic", By: "cli", Note: "recharged billing account"},
		SessionModelSelected{
			Session: "agent:main:telegram:direct:42", Model: claude, Source: "auto",
			Origin: &gpt, Fallbacks: []ModelRef{{Provider: "google", Model: "gemini-2.5-pro"}}, HasFallbacks: true,
		},
		SessionModelCleared{Session: "agent:main:telegram:direct:42", Previous: claude, PreviousSource: "auto", Cause: "auto_recovered"},
		SessionAuthPinned{Session: "agent:main:telegram:direct:42", ProfileID: "openai:user@example.com", Provider: "openai", Source: "auto"},
		SessionAuthUnpinned{Session: "agent:main:telegram:direct:42", ProfileID: "openai:user@example.com", Source: "auto", Cause: "cooldown"},
		SessionReset{Session: "agent:main:telegram:direct:42", Kind: "new"},
		FallbackNoticeStateChanged{
			Session: "agent:main:telegram:direct:42", Selected: "openai/gpt-5", Active: "anthropic/claude-sonnet-4-5",
			Reason: "rate_limit", Previous: "", TurnID: "turn-01JH8Z",
		},
		CompactionCompleted{Session: "agent:main:telegram:direct:42", CompactionCount: 3},
		TurnStarted{
			TurnID: "turn-01JH8Z", Session: "agent:main:telegram:direct:42", Chat: "direct",
			Requested: gpt, SelectionSource: "default", Strict: false,
			Chain: []Candidate{
				{Provider: "openai", Model: "gpt-5", RouteOrigin: "requested"},
				{Provider: "anthropic", Model: "claude-sonnet-4-5", RouteOrigin: "configured-fallback"},
			},
			ConfigHash:   "sha256:9f2c4b1e7a0d3c5b8e6f1a2d4c7b9e0f3a5c8d1b6e4f7a2c9d0b3e5f8a1c4d7b",
			AttemptLimit: 40, PinnedProfile: "openai:user@example.com", PinSource: "auto", Seed: 1311768467294899695, Rules: 2,
		},
		AttemptStarted{TurnID: "turn-01JH8Z", Attempt: 1, CandidateIndex: 0, Provider: "openai", Model: "gpt-5",
			ProfileID: "openai:user@example.com", Kind: "first", Round: 0},
		AttemptFailed{
			TurnID: "turn-01JH8Z", Attempt: 1, Provider: "openai", Model: "gpt-5", ProfileID: "openai:user@example.com",
			Error: ProviderErrorRecord{
				Status: 429, Code: "rate_limit_exceeded", Type: "requests", Name: "RateLimitError",
				MessagePreview: "Rate limit reached for gpt-5 in organization org-[redacted] on tokens per min (TPM): Limit 30000, Used 29800, Requested 1200.",
				Hash:           "sha256:4e1f0c9b2a7d6e3f8c5b1a0d9e2f7c4b6a3d8e1f0c5b9a2d7e4f1c8b3a6d0e9f",
			},
			Reason: "rate_limit", Status: 429, Disposition: "failover",
			Evidence:     Evidence{Rule: "status-429", Source: "status", Field: "status", Match: "429"},
			RetryAfterMs: 2000, LatencyMs: 812,
		},
		AttemptSucceeded{TurnID: "turn-01JH8Z", Attempt: 3, Provider: "anthropic", Model: "claude-sonnet-4-5",
			ProfileID: "anthropic:ops@example.com", LatencyMs: 2310},
		RetryScheduled{TurnID: "turn-01JH8Z", Attempt: 1, Retry: 1, Budget: 2, BaseMs: 1000, DelayMs: 1370,
			RetryAfterMs: 0, JitterSeed: 1311768467294899695, WindowEndsAt: t0 + 90000},
		CandidateSkipped{TurnID: "turn-01JH8Z", CandidateIndex: 1, Provider: "anthropic", Model: "claude-sonnet-4-5",
			Reason: "rate_limit", Decision: "skip", Message: "Provider anthropic is in cooldown", SoonestExpiry: t0 + 60000},
		FallbackStepped{
			TurnID: "turn-01JH8Z", SessionID: "agent:main:telegram:direct:42", Decision: "candidate_failed",
			RequestedProvider: "openai", RequestedModel: "gpt-5",
			CandidateProvider: "openai", CandidateModel: "gpt-5", CandidateRouteOrigin: "requested",
			Attempt: 1, Total: 2, Reason: "rate_limit", Status: 429, Code: "rate_limit_exceeded",
			ErrorPreview: "Rate limit reached for gpt-5", ErrorHash: "sha256:4e1f0c9b",
			NextCandidateProvider: "anthropic", NextCandidateModel: "claude-sonnet-4-5", NextCandidateRouteOrigin: "configured-fallback",
			IsPrimary: true, RequestedModelMatched: true, FallbackConfigured: true, AllowTransientProbe: false, ProfileCount: 2,
			PreviousAttempts: []PreviousAttempt{{Provider: "openai", Model: "gpt-5", Reason: "rate_limit", Status: 429,
				Code: "rate_limit_exceeded", ErrorPreview: "Rate limit reached for gpt-5", ErrorHash: "sha256:4e1f0c9b"}},
			ConsoleMessage:   "openai/gpt-5 failed (rate_limit), falling back to anthropic/claude-sonnet-4-5",
			FallbackStepType: "fallback_step", FallbackStepFromModel: "openai/gpt-5", FallbackStepToModel: "anthropic/claude-sonnet-4-5",
			FallbackStepFromReason: "rate_limit", FallbackStepFromDetail: "429 rate_limit_exceeded",
			FallbackStepChainPosition: 1, FallbackStepFinalOutcome: "next_fallback",
		},
		ChainRetryScheduled{TurnID: "turn-01JH8Z", Round: 1, DelayMs: 2500, WaitedMs: 0},
		NoticeSent{TurnID: "turn-01JH8Z", Session: "agent:main:telegram:direct:42", Kind: "fallback",
			Text: "↪️ Model Fallback: anthropic/claude-sonnet-4-5 (selected openai/gpt-5; rate limit)", Delivered: true},
		TurnSucceeded{TurnID: "turn-01JH8Z", AnsweredBy: claude, ProfileID: "anthropic:ops@example.com", Attempts: 3, DurationMs: 5120},
		TurnExhausted{
			TurnID: "turn-01JH8Z", Summary: "All models failed (2): openai/gpt-5: Rate limit reached (rate_limit) | anthropic/claude-sonnet-4-5: Overloaded (overloaded)",
			Reason: "rate_limit",
			Attempts: []ExhaustedAttempt{
				{Provider: "openai", Model: "gpt-5", Reason: "rate_limit", Status: 429, Code: "rate_limit_exceeded", Error: "Rate limit reached"},
				{Provider: "anthropic", Model: "claude-sonnet-4-5", Reason: "overloaded", Status: 529, Error: "Overloaded"},
			},
			SoonestCooldownExpiry: t0 + 60000, DurationMs: 9400,
		},
		TurnStopped{TurnID: "turn-01JH8Z", Disposition: "compaction", Reason: "context_overflow",
			Message: "prompt is too long: 210000 tokens > 200000 maximum", Attempts: 1, DurationMs: 640},
		AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:work@example.com", "openai:user@example.com"}, By: "cli"},
		ProfileUsed{ProfileID: "openai:work@example.com", Provider: "openai", Model: "gpt-5",
			TurnID: "turn-01JH9A", Attempt: 1, LastUsed: t0 + 5100},
		LiveSwitchMarked{TurnID: "turn-01JHA1", Session: "agent:main:telegram:direct:42",
			Model: ModelRef{Provider: "google-gemini", Model: "gemini-2.5-pro"}, Source: "user"},
		TurnSwitched{TurnID: "turn-01JHA1", Session: "agent:main:telegram:direct:42",
			Model:   ModelRef{Provider: "google-gemini", Model: "gemini-2.5-pro"},
			Message: "LiveSessionModelSwitchError: google-gemini/gemini-2.5-pro was selected during the run; it is not in the candidate chain", Attempts: 1, DurationMs: 900},
		SessionPruned{Session: "agent:main:telegram:direct:7", Reason: "stale", LastActiveAt: t0 - 31*24*3600*1000, PruneAfterMs: 30 * 24 * 3600 * 1000},
	}
}
