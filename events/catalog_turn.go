package events

// Candidate is one entry of a turn's candidate chain (reference §6).
type Candidate struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// RouteOrigin: requested | configured-fallback | configured-primary.
	RouteOrigin string `json:"route_origin" enum:"requested|configured-fallback|configured-primary"`
}

// ProviderErrorRecord is a provider error as stored: previews are redacted
// (API keys, bearer tokens, JWTs, emails, org/project ids) and bounded, so
// nothing secret is ever appended.
type ProviderErrorRecord struct {
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	Type   string `json:"type,omitempty"`
	Name   string `json:"name,omitempty"`
	// MessagePreview is the redacted, truncated provider message.
	MessagePreview string `json:"message_preview,omitempty"`
	// BodyPreview is the redacted, truncated raw body.
	BodyPreview string `json:"body_preview,omitempty"`
	// Hash is "sha256:<hex>" of the redacted message and body (the first
	// 16 384 runes of each), so equal errors can be grouped; it is never
	// taken over raw text, which would let a reader confirm a guessed secret.
	Hash string `json:"hash,omitempty"`
}

// Evidence says which classifier rule decided and what it matched
// (redacted).
type Evidence struct {
	Rule   string `json:"rule"`
	Source string `json:"source,omitempty"`
	Field  string `json:"field,omitempty"`
	Match  string `json:"match,omitempty"`
}

// TurnStarted opens a turn: the chain it will walk and the rules it runs
// under (seed 000 "Runtime flow", "Candidate chain rules"). Version 2 adds
// the optional rules, skip_cache_since and fallbacks_override (upcast
// unchanged); version 3 writes seed as a decimal string.
type TurnStarted struct {
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	// Chat is direct | group | channel; notices are suppressed in group and
	// channel chats.
	Chat      string   `json:"chat" enum:"direct|group|channel"`
	Requested ModelRef `json:"requested"`
	// SelectionSource: default | agent | user | legacy | auto | cron.
	SelectionSource string `json:"selection_source" enum:"default|agent|user|legacy|auto|cron"`
	// Strict is true when the chain is the requested model alone by policy.
	Strict bool        `json:"strict"`
	Chain  []Candidate `json:"chain"`
	// ConfigHash names the ConfigApplied in force.
	ConfigHash string `json:"config_hash"`
	// AttemptLimit is the inner run-loop limit
	// min(160, max(32, 24 + 8 × max(1, profileCount))).
	AttemptLimit int `json:"attempt_limit"`
	// PinnedProfile and PinSource are the session's auth pin at start.
	PinnedProfile string `json:"pinned_profile,omitempty"`
	PinSource     string `json:"pin_source,omitempty"`
	// Seed seeds every jitter draw of the turn (recorded so replay is
	// exact). Since v3 it is written as a decimal string, which every JSON
	// reader holds exactly (a JavaScript number rounds above 2^53); v1 and
	// v2 stored a JSON number, upcast digit for digit.
	Seed uint64 `json:"seed,string"`
	// StartedAt is the turn's start, Unix ms (the decider's now); durations
	// in TurnSucceeded/Exhausted/Stopped are measured from it.
	StartedAt int64 `json:"started_at"`
	// AutoOriginProbe is true when a stored auto override's origin is being
	// probed this turn (seed 000: every 5 minutes); Requested is the origin.
	AutoOriginProbe bool `json:"auto_origin_probe,omitempty"`
	// Rules is the revision of the decision rules the turn is decided by
	// (v2; absent = 1, the rules of every build before issue 22): each of
	// the turn's decisions, and what it reads of other turns (probe slots,
	// skip marks), follows it, so a stored turn re-decides as it was
	// decided (docs/policy.md "Rule revisions").
	Rules int `json:"rules,omitempty"`
	// SkipCacheSince is when the auth skip cache of the engine that
	// started the turn began, Unix ms (v2; absent = 0): the cache is
	// process-local (seed 000: "The cache is process-local and clears on
	// Gateway restart"), so from rule revision 2 the turn reads no skip
	// mark set before it. Recorded when the engine started on a stream
	// that already held commits (a gateway restart).
	SkipCacheSince int64 `json:"skip_cache_since,omitempty"`
	// FallbacksOverride is true when the caller supplied the turn's
	// fallbacks (fallbacksOverride, v2; seed 000 "Candidate chain rules"):
	// Chain is then Requested and that list, no configured primary
	// appended, and an empty list made the turn strict.
	FallbacksOverride bool `json:"fallbacks_override,omitempty"`
}

func (TurnStarted) EventType() string         { return "TurnStarted" }
func (TurnStarted) EventAggregate() Aggregate { return AggTurn }
func (e TurnStarted) EventKey() string        { return e.TurnID }

// AttemptStarted records one provider call about to be made.
// Kind: first | retry | rotation | fallback | probe | chain_retry |
// live_switch (a jump to the candidate a live user switch selected, rule
// revision 3) | transport_recovery (the bounded same-model continuation
// after a transport failure that followed a settled tool batch, rule
// revision 3).
type AttemptStarted struct {
	TurnID string `json:"turn_id"`
	// Attempt is 1-based across the whole turn.
	Attempt int `json:"attempt"`
	// CandidateIndex is the 0-based position in TurnStarted.Chain.
	CandidateIndex int    `json:"candidate_index"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	ProfileID      string `json:"profile_id,omitempty"`
	Kind           string `json:"kind" enum:"first|retry|rotation|fallback|probe|chain_retry|live_switch|transport_recovery"`
	// Round is the whole-chain overload retry round (0 for the first pass).
	Round int `json:"round,omitempty"`
	// StartedAt is when the call starts, Unix ms (the probe throttle is
	// measured from a probe's StartedAt).
	StartedAt int64 `json:"started_at"`
	// ProbeSlot is true when this call uses the provider's transient
	// cooldown probe slot (one per provider per run, reference §7 step 5).
	ProbeSlot bool `json:"probe_slot,omitempty"`
}

func (AttemptStarted) EventType() string         { return "AttemptStarted" }
func (AttemptStarted) EventAggregate() Aggregate { return AggTurn }
func (e AttemptStarted) EventKey() string        { return e.TurnID }

// AttemptFailed records a failed provider call and its classification.
// Version 2 adds reset and long_window; a v1 event has neither (upcast
// unchanged). Version 3 adds tool_batch_settled; a v1 or v2 failure was
// never reported so (upcast unchanged).
type AttemptFailed struct {
	TurnID    string `json:"turn_id"`
	Attempt   int    `json:"attempt"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	ProfileID string `json:"profile_id,omitempty"`
	// Error is the redacted provider error.
	Error ProviderErrorRecord `json:"error"`
	// Reason, Status, Disposition: the classification (POLICY "Reasons,
	// status, disposition"). Status is the provider's own HTTP status when
	// it gave one, else the reason's mapped status (0 for none).
	Reason      string   `json:"reason" enum:"reason"`
	Status      int      `json:"status,omitempty"`
	Disposition string   `json:"disposition" enum:"failover|compaction|abort|refusal|coordination"`
	Evidence    Evidence `json:"evidence"`
	// RetryAfterMs is the provider's retry-after hint, 0 when none.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
	// RequestSizeCeiling is set when the error states a TPM limit below the
	// request size: tokens [limit, requested].
	RequestSizeCeiling []int64 `json:"request_size_ceiling,omitempty"`
	// LatencyMs is how long the call took.
	LatencyMs int64 `json:"latency_ms,omitempty"`
	// ReplayUnsafe is true when assistant output or a tool call had started
	// before the failure: the attempt is never retried and the whole-chain
	// overload retry is off for the rest of the turn.
	ReplayUnsafe bool `json:"replay_unsafe,omitempty"`
	// Reset is when the provider said its usage window reopens (v2; absent
	// in v1 and when it said nothing): a rate limit carrying one blocks the
	// profile until then.
	Reset *ProviderReset `json:"reset,omitempty"`
	// LongWindow is the evidence that the rate limit is a long usage window
	// (v2): no same-model retry, rotation at once.
	LongWindow *UsageWindow `json:"long_window,omitempty"`
	// ToolBatchSettled is true when the gateway reported that the call
	// continued the transcript after a settled tool batch (v3): with a
	// transport failure before any output (reason timeout, no HTTP status,
	// not replay_unsafe) the same call is continued up to twice a turn
	// without rerunning the tools (rule revision 3, transport_recovery).
	ToolBatchSettled bool `json:"tool_batch_settled,omitempty"`
}

func (AttemptFailed) EventType() string         { return "AttemptFailed" }
func (AttemptFailed) EventAggregate() Aggregate { return AggTurn }
func (e AttemptFailed) EventKey() string        { return e.TurnID }

// AttemptSucceeded records a provider call that answered.
type AttemptSucceeded struct {
	TurnID    string `json:"turn_id"`
	Attempt   int    `json:"attempt"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	ProfileID string `json:"profile_id,omitempty"`
	LatencyMs int64  `json:"latency_ms,omitempty"`
}

func (AttemptSucceeded) EventType() string         { return "AttemptSucceeded" }
func (AttemptSucceeded) EventAggregate() Aggregate { return AggTurn }
func (e AttemptSucceeded) EventKey() string        { return e.TurnID }

// RetryScheduled records a same-model transient retry (POLICY "Retries,
// probes, limits"): delay = min(30 s, 1 s × 2^(k−1)) × jitter(0.5–1.5)
// capped at 30 s, floored by retry-after. Version 2 writes jitter_seed as a
// decimal string.
type RetryScheduled struct {
	TurnID  string `json:"turn_id"`
	Attempt int    `json:"attempt"`
	// Retry is the 1-based retry number k for this candidate.
	Retry  int `json:"retry"`
	Budget int `json:"budget"`
	// BaseMs is the un-jittered delay, DelayMs the one waited.
	BaseMs       int64 `json:"base_ms"`
	DelayMs      int64 `json:"delay_ms"`
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
	// JitterSeed is the seed the jitter was drawn from. Since v2 it is
	// written as a decimal string (exact in every JSON reader); v1 stored a
	// JSON number, upcast digit for digit.
	JitterSeed uint64 `json:"jitter_seed,string"`
	// WindowEndsAt is the end of the 90 s retry window (Unix ms, 0 = none).
	WindowEndsAt int64 `json:"window_ends_at,omitempty"`
	// ResumeAt is when the retry call may start, Unix ms (decision time +
	// DelayMs).
	ResumeAt int64 `json:"resume_at"`
}

func (RetryScheduled) EventType() string         { return "RetryScheduled" }
func (RetryScheduled) EventAggregate() Aggregate { return AggTurn }
func (e RetryScheduled) EventKey() string        { return e.TurnID }

// CandidateSkipped records a candidate not attempted: every profile
// unusable and no probe allowed, the auth skip cache, or a TLS-banned
// provider (reference §7 step 4–5). Decision: skip | suspend.
type CandidateSkipped struct {
	TurnID         string `json:"turn_id"`
	CandidateIndex int    `json:"candidate_index"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	// Reason is the inferred reason the profiles are unavailable.
	Reason   string `json:"reason" enum:"reason"`
	Decision string `json:"decision" enum:"skip|suspend"`
	// Message is the exact text, e.g. "Provider anthropic is in cooldown".
	Message string `json:"message"`
	// SoonestExpiry is the model-aware soonest cooldown expiry, Unix ms.
	SoonestExpiry int64 `json:"soonest_expiry,omitempty"`
}

func (CandidateSkipped) EventType() string         { return "CandidateSkipped" }
func (CandidateSkipped) EventAggregate() Aggregate { return AggTurn }
func (e CandidateSkipped) EventKey() string        { return e.TurnID }

// PreviousAttempt is one earlier attempt as listed in a
// model_fallback_decision record (reference §8 previousAttempts[]).
type PreviousAttempt struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Reason       string `json:"reason,omitempty" enum:"reason"`
	Status       int    `json:"status,omitempty"`
	Code         string `json:"code,omitempty"`
	ErrorPreview string `json:"errorPreview,omitempty"`
	ErrorHash    string `json:"errorHash,omitempty"`
}

// FallbackStepped is one model_fallback_decision record with OpenClaw's
// field names (reference §8), so exporters can emit it unchanged.
// Decision: candidate_failed | skip_candidate | probe_cooldown_candidate |
// candidate_succeeded, or live_switch (rule revision 3): a pending live
// switch taken by the run, with reason unknown (OpenClaw's reason on the
// LiveSessionModelSwitchError path, reference §1), the error preview
// naming the selected model and fallbackStepToModel the candidate jumped
// to (fallbackStepFinalOutcome next_fallback), or none when the selection
// is the current or an earlier candidate (final outcome continue). A
// live switch outside the chain records the failed candidate's
// candidate_failed with no next candidate (final outcome switched). The
// fallbackStep* fields are empty for
// probe_cooldown_candidate and for a success with no previous attempt.
type FallbackStepped struct {
	TurnID                    string            `json:"turnId"`
	SessionID                 string            `json:"sessionId,omitempty"`
	Decision                  string            `json:"decision" enum:"candidate_failed|skip_candidate|probe_cooldown_candidate|candidate_succeeded|live_switch"`
	RequestedProvider         string            `json:"requestedProvider"`
	RequestedModel            string            `json:"requestedModel"`
	CandidateProvider         string            `json:"candidateProvider"`
	CandidateModel            string            `json:"candidateModel"`
	CandidateRouteOrigin      string            `json:"candidateRouteOrigin,omitempty"`
	Attempt                   int               `json:"attempt"`
	Total                     int               `json:"total"`
	Reason                    string            `json:"reason,omitempty" enum:"reason"`
	Status                    int               `json:"status,omitempty"`
	Code                      string            `json:"code,omitempty"`
	ErrorPreview              string            `json:"errorPreview,omitempty"`
	ErrorHash                 string            `json:"errorHash,omitempty"`
	NextCandidateProvider     string            `json:"nextCandidateProvider,omitempty"`
	NextCandidateModel        string            `json:"nextCandidateModel,omitempty"`
	NextCandidateRouteOrigin  string            `json:"nextCandidateRouteOrigin,omitempty"`
	IsPrimary                 bool              `json:"isPrimary"`
	RequestedModelMatched     bool              `json:"requestedModelMatched"`
	FallbackConfigured        bool              `json:"fallbackConfigured"`
	AllowTransientProbe       bool              `json:"allowTransientCooldownProbe"`
	ProfileCount              int               `json:"profileCount"`
	PreviousAttempts          []PreviousAttempt `json:"previousAttempts,omitempty"`
	ConsoleMessage            string            `json:"consoleMessage,omitempty"`
	FallbackStepType          string            `json:"fallbackStepType,omitempty"`
	FallbackStepFromModel     string            `json:"fallbackStepFromModel,omitempty"`
	FallbackStepToModel       string            `json:"fallbackStepToModel,omitempty"`
	FallbackStepFromReason    string            `json:"fallbackStepFromFailureReason,omitempty"`
	FallbackStepFromDetail    string            `json:"fallbackStepFromFailureDetail,omitempty"`
	FallbackStepChainPosition int               `json:"fallbackStepChainPosition,omitempty"`
	FallbackStepFinalOutcome  string            `json:"fallbackStepFinalOutcome,omitempty"`
}

func (FallbackStepped) EventType() string         { return "FallbackStepped" }
func (FallbackStepped) EventAggregate() Aggregate { return AggTurn }
func (e FallbackStepped) EventKey() string        { return e.TurnID }

// ChainRetryScheduled records a whole-chain overload retry (seed 003):
// every candidate failed only with overloaded before any output; up to 10
// rounds, 2.5 s doubling to a 30 s cap.
type ChainRetryScheduled struct {
	TurnID  string `json:"turn_id"`
	Round   int    `json:"round"`
	DelayMs int64  `json:"delay_ms"`
	// WaitedMs is the total waited in chain retries before this one.
	WaitedMs int64 `json:"waited_ms"`
	// ResumeAt is when the next round may start, Unix ms (decision time +
	// DelayMs).
	ResumeAt int64 `json:"resume_at"`
}

func (ChainRetryScheduled) EventType() string         { return "ChainRetryScheduled" }
func (ChainRetryScheduled) EventAggregate() Aggregate { return AggTurn }
func (e ChainRetryScheduled) EventKey() string        { return e.TurnID }

// NoticeSent records a user-visible operational notice. Kind: fallback |
// fallback_cleared | overload_wait. Delivered is false when it was
// suppressed (group or channel chats) but recorded (seed 000 "User-visible
// fallback notices").
type NoticeSent struct {
	TurnID    string `json:"turn_id"`
	Session   string `json:"session"`
	Kind      string `json:"kind" enum:"fallback|fallback_cleared|overload_wait"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

func (NoticeSent) EventType() string         { return "NoticeSent" }
func (NoticeSent) EventAggregate() Aggregate { return AggTurn }
func (e NoticeSent) EventKey() string        { return e.TurnID }

// TurnSucceeded closes a turn that got an answer.
type TurnSucceeded struct {
	TurnID     string   `json:"turn_id"`
	AnsweredBy ModelRef `json:"answered_by"`
	ProfileID  string   `json:"profile_id,omitempty"`
	Attempts   int      `json:"attempts"`
	DurationMs int64    `json:"duration_ms"`
}

func (TurnSucceeded) EventType() string         { return "TurnSucceeded" }
func (TurnSucceeded) EventAggregate() Aggregate { return AggTurn }
func (e TurnSucceeded) EventKey() string        { return e.TurnID }

// ExhaustedAttempt is one attempt listed in an exhaustion summary.
type ExhaustedAttempt struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Reason   string `json:"reason" enum:"reason"`
	Status   int    `json:"status,omitempty"`
	Code     string `json:"code,omitempty"`
	Error    string `json:"error"`
}

// TurnExhausted closes a turn whose every candidate failed (reference §7
// "Failure summary"): Summary is exactly
// "All models failed (N): p/m: err (reason) | …".
type TurnExhausted struct {
	TurnID   string             `json:"turn_id"`
	Summary  string             `json:"summary"`
	Reason   string             `json:"reason" enum:"reason"`
	Attempts []ExhaustedAttempt `json:"attempts"`
	// SoonestCooldownExpiry is the model-aware soonest expiry, Unix ms (0 =
	// unknown).
	SoonestCooldownExpiry int64 `json:"soonest_cooldown_expiry,omitempty"`
	DurationMs            int64 `json:"duration_ms"`
}

func (TurnExhausted) EventType() string         { return "TurnExhausted" }
func (TurnExhausted) EventAggregate() Aggregate { return AggTurn }
func (e TurnExhausted) EventKey() string        { return e.TurnID }

// TurnStopped closes a turn that stopped without exhausting the chain:
// Disposition compaction | abort | refusal | coordination, or failover with
// Reason "unknown" for a final unknown error.
type TurnStopped struct {
	TurnID      string `json:"turn_id"`
	Disposition string `json:"disposition" enum:"failover|compaction|abort|refusal|coordination"`
	Reason      string `json:"reason" enum:"reason"`
	Message     string `json:"message,omitempty"`
	Attempts    int    `json:"attempts"`
	DurationMs  int64  `json:"duration_ms"`
}

func (TurnStopped) EventType() string         { return "TurnStopped" }
func (TurnStopped) EventAggregate() Aggregate { return AggTurn }
func (e TurnStopped) EventKey() string        { return e.TurnID }

// LiveSwitchMarked records a pending live model switch on a running turn
// (seed 000 "Session overrides and live model switching"; rule revision
// 3): an explicit user model selection (`/model`, session_status(model=…),
// sessions.patch) that arrived while the turn ran. It is appended in the
// selection's own commit, which takes the turn's next step id, so the
// turn's next decision either sees it or is decided again on it. The turn
// takes it at its next step: a later candidate of its chain is called
// next (FallbackStepped live_switch), a model outside the chain ends the
// turn (TurnSwitched). System-driven changes never mark one.
type LiveSwitchMarked struct {
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	// Model is the selected model.
	Model ModelRef `json:"model"`
	// ProfileID is the auth profile the selection pinned (`/model
	// p/m@profile`), "" when none.
	ProfileID string `json:"profile_id,omitempty"`
	// Source is the selection source that marked it (always user: only
	// an explicit user selection marks a live switch).
	Source string `json:"source"`
}

func (LiveSwitchMarked) EventType() string         { return "LiveSwitchMarked" }
func (LiveSwitchMarked) EventAggregate() Aggregate { return AggTurn }
func (e LiveSwitchMarked) EventKey() string        { return e.TurnID }

// TurnSwitched closes a turn whose pending live switch selected a model
// outside its candidate chain (rule revision 3): the turn is handed back
// to its owner (the agent, reply or cron retry owner) to run the same
// turn again on Model (seed 000: "OpenClaw returns the original switch …
// so the selected model can complete the same turn").
type TurnSwitched struct {
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	// Model is the selected model the same turn is to run on.
	Model ModelRef `json:"model"`
	// ProfileID is the auth profile the selection pinned, "" when none.
	ProfileID string `json:"profile_id,omitempty"`
	// Message is the text of the switch: "LiveSessionModelSwitchError: …".
	Message    string `json:"message"`
	Attempts   int    `json:"attempts"`
	DurationMs int64  `json:"duration_ms"`
}

func (TurnSwitched) EventType() string         { return "TurnSwitched" }
func (TurnSwitched) EventAggregate() Aggregate { return AggTurn }
func (e TurnSwitched) EventKey() string        { return e.TurnID }
