package serve

import (
	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// The JSON wire types of the HTTP API and the NATS micro service
// (schemas/openapi.v1.yaml). Field names are snake_case; times are Unix
// ms UTC; durations are ms.

// BeginRequest opens a turn: POST /v1/turns.
type BeginRequest struct {
	// Agent is the agent id: the stream namespace and the OpenClaw agent
	// whose agents.entries model applies ("" = the server's default agent).
	Agent string `json:"agent,omitempty"`
	// Session is the session key (required).
	Session string `json:"session"`
	// Chat is direct | group | channel ("" = direct).
	Chat string `json:"chat,omitempty"`
	// Model, "provider/model", is selected for the session first (as
	// `/model` with Source) — or, with source cron, is the cron payload's
	// model for this turn only.
	Model string `json:"model,omitempty"`
	// Source of Model: user (default) | default | auto | legacy | cron.
	Source string `json:"source,omitempty"`
	// Fallbacks is the cron payload's payload.fallbacks ("provider/model"
	// each; source cron only): the chain is Model then these, with no
	// configured primary appended, and [] is a strict cron run. Absent =
	// the configured fallbacks.
	Fallbacks *[]string `json:"fallbacks,omitempty"`
	// FallbacksOverride is the caller's fallbacksOverride for this turn
	// ("provider/model" each, any source): the chain is the selected model
	// then exactly these, no configured primary appended; [] makes the
	// turn strict (seed 000 "Candidate chain rules"). Absent = the
	// selection source's own fallbacks. Not with fallbacks.
	FallbacksOverride *[]string `json:"fallbacks_override,omitempty"`
	// TurnID, when set, names the turn (default: a fresh UUIDv7). A begin
	// re-sent with the same id and session returns the turn's current step.
	TurnID string `json:"turn_id,omitempty"`
}

// TurnStep is the answer to every turn operation.
type TurnStep struct {
	TurnID string `json:"turn_id"`
	Agent  string `json:"agent"`
	Next   Next   `json:"next"`
	// Replayed is true when the step had already been decided (a repeated
	// report): nothing was appended.
	Replayed bool `json:"replayed,omitempty"`
	// IgnoredKeys are the keys of a reported error that are not provider
	// error fields, so did not count ("stauts", "cause.mesage"): a
	// misspelt status is no status.
	IgnoredKeys []string `json:"ignored_keys,omitempty"`
}

// OutcomeRequest reports an attempt's outcome:
// POST /v1/turns/{turn_id}/outcomes.
type OutcomeRequest struct {
	// TurnID comes from the path (HTTP) or the body (NATS).
	TurnID string `json:"turn_id,omitempty"`
	// Agent narrows the turn lookup ("" = every served agent).
	Agent string `json:"agent,omitempty"`
	// Attempt is next.attempt of the call being reported.
	Attempt int `json:"attempt"`
	// OK: the call answered. Otherwise Error is the provider's error.
	OK    bool                    `json:"ok,omitempty"`
	Error *classify.ProviderError `json:"error,omitempty"`
	// LatencyMs is how long the call took (optional).
	LatencyMs int64 `json:"latency_ms,omitempty"`
	// OutputStarted / ToolStarted: assistant output or a tool call had
	// started before the error, so the attempt may not be replayed.
	OutputStarted bool `json:"output_started,omitempty"`
	ToolStarted   bool `json:"tool_started,omitempty"`
	// ToolBatchSettled: the call continued the transcript after a settled
	// tool batch; a transport failure before any output qualifies for the
	// bounded transport recovery (engine.ToolBatchSettledError).
	ToolBatchSettled bool `json:"tool_batch_settled,omitempty"`
}

// TurnRef names a turn: POST /v1/turns/{turn_id}/resume, GET
// /v1/turns/{turn_id}.
type TurnRef struct {
	TurnID string `json:"turn_id"`
	Agent  string `json:"agent,omitempty"`
}

// Next is what the gateway does now. Action is call | wait | done |
// exhausted | stop | switch; only that action's fields are set.
type Next struct {
	Action string `json:"action"`
	// call: make the call with this provider, model and auth profile
	// ("" = the provider's default credentials), then report its outcome
	// for Attempt.
	Provider       string `json:"provider,omitempty"`
	Model          string `json:"model,omitempty"`
	Profile        string `json:"profile,omitempty"`
	Attempt        int    `json:"attempt,omitempty"`
	Kind           string `json:"kind,omitempty"`
	CandidateIndex int    `json:"candidate_index,omitempty"`
	Round          int    `json:"round,omitempty"`
	// wait: sleep Ms, then POST /v1/turns/{turn_id}/resume. ResumeAt is
	// the same moment as Unix ms.
	Ms       int64 `json:"ms,omitempty"`
	ResumeAt int64 `json:"resume_at,omitempty"`
	// done: AnsweredBy ("provider/model") answered, with Profile.
	AnsweredBy string `json:"answered_by,omitempty"`
	// exhausted: Summary is what the user sees (RawError: it is the single
	// attempt's own error text), Attempts the failed and skipped
	// candidates, SoonestCooldownExpiry Unix ms (0 = unknown).
	Summary               string                    `json:"summary,omitempty"`
	RawError              bool                      `json:"raw_error,omitempty"`
	Attempts              []events.ExhaustedAttempt `json:"attempts,omitempty"`
	SoonestCooldownExpiry int64                     `json:"soonest_cooldown_expiry,omitempty"`
	// stop: Disposition compaction | abort | refusal | coordination |
	// failover, with the provider's redacted Message. A failover stop is
	// the provider's error surfaced as it is: reason format (a format
	// error is terminal unless failover.formatAdvances), or unknown or
	// unclassified on the last candidate.
	Disposition string `json:"disposition,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	// switch: the user selected SwitchTo ("provider/model", with Profile
	// when the selection pinned one) during the run, outside the chain:
	// run the same turn again as a new turn, which starts from that
	// selection; Message is the switch in words.
	SwitchTo string `json:"switch_to,omitempty"`
	// Notices to show the user now (Delivered false: recorded, not shown
	// in group and channel chats).
	Notices []Notice `json:"notices"`
}

// Notice is a user-visible operational notice.
type Notice struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

func nextJSON(n policy.Next) Next {
	out := Next{Action: string(n.Kind), Notices: []Notice{}}
	for _, x := range n.Notices {
		out.Notices = append(out.Notices, Notice{Kind: string(x.Kind), Text: x.Text, Delivered: x.Delivered})
	}
	switch n.Kind {
	case policy.NextCall:
		c := n.Call
		out.Provider, out.Model, out.Profile, out.Attempt = c.Provider, c.Model, c.ProfileID, c.Attempt
		out.Kind, out.CandidateIndex, out.Round = string(c.Kind), c.CandidateIndex, c.Round
	case policy.NextWait:
		out.Ms, out.ResumeAt = n.WaitMs, n.ResumeAt
	case policy.NextDone:
		out.AnsweredBy, out.Profile = n.AnsweredBy.String(), n.ProfileID
	case policy.NextExhausted:
		out.Summary, out.RawError, out.Attempts, out.SoonestCooldownExpiry = n.Summary, n.RawError, n.Attempts, n.SoonestCooldownExpiry
	case policy.NextStop:
		out.Disposition, out.Reason, out.Message = n.Disposition, n.Reason, n.Message
	case policy.NextSwitch:
		out.SwitchTo, out.Profile, out.Message = n.SwitchTo.String(), n.ProfileID, n.Message
	}
	return out
}

// ModelRequest is `/model`: POST /v1/sessions/{agent}/{session}/model.
type ModelRequest struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	// Model is "provider/model", or "default" to clear the override
	// (`/model default`).
	Model string `json:"model"`
	// Source: user (default) | default | auto | legacy. Source cron is
	// refused (400): a cron model is one turn's (BeginRequest.Source).
	Source string `json:"source,omitempty"`
	// Origin ("provider/model") is the configured model an auto override
	// fell back from (source auto only).
	Origin string `json:"origin,omitempty"`
	// Profile also pins that auth profile as a user pin
	// (`/model p/m@profile`).
	Profile string `json:"profile,omitempty"`
}

// ResetRequest is `/new` or `/reset`: POST …/reset.
type ResetRequest struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	// Kind is new | reset ("" = reset).
	Kind string `json:"kind,omitempty"`
}

// PinRequest pins an auth profile: POST …/pin.
type PinRequest struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	Profile string `json:"profile"`
	// Source: user (default) | auto.
	Source string `json:"source,omitempty"`
}

// AuthOrderRequest stores the agent's auth-profile order of a provider
// (POST /v1/agents/{agent}/auth/order/{provider}); an empty or absent
// profiles list clears it.
type AuthOrderRequest struct {
	Agent    string   `json:"agent,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Profiles []string `json:"profiles,omitempty"`
	// By names who sets it (default "api").
	By string `json:"by,omitempty"`
}

// AuthOrderResult is the stored order after the command and the events it
// recorded.
type AuthOrderResult struct {
	Agent    string   `json:"agent"`
	Provider string   `json:"provider"`
	Profiles []string `json:"profiles"`
	Events   []string `json:"events"`
}

// SessionRef names a session: GET /v1/sessions/{agent}/{session}.
type SessionRef struct {
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session"`
}

// SessionView is a session's selection state.
type SessionView struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
	// Model/Source: the stored override ("" = none).
	Model  string `json:"model,omitempty"`
	Source string `json:"source,omitempty"`
	Origin string `json:"origin,omitempty"`
	// Pin, PinProvider, PinSource (auto | user): the auth-profile pin.
	Pin         string `json:"pin,omitempty"`
	PinProvider string `json:"pin_provider,omitempty"`
	PinSource   string `json:"pin_source,omitempty"`
	// NoticeActive / NoticeSelected: the fallback-notice state.
	NoticeActive    string `json:"notice_active,omitempty"`
	NoticeSelected  string `json:"notice_selected,omitempty"`
	CompactionCount int    `json:"compaction_count"`
	LastReset       string `json:"last_reset,omitempty"`
}

// SessionCommandResult is the answer to a session command.
type SessionCommandResult struct {
	Session SessionView `json:"session"`
	// Events are the types of the events recorded (none when nothing
	// changed).
	Events []string `json:"events"`
}

// ProfilesRequest reads usageStats: GET /v1/profiles?agent=.
type ProfilesRequest struct {
	Agent string `json:"agent,omitempty"`
}

// ProfilesView lists usageStats with OpenClaw's field names.
type ProfilesView struct {
	Agent    string        `json:"agent"`
	Now      int64         `json:"now"`
	Profiles []ProfileView `json:"profiles"`
}

// ProfileView is one auth profile's usageStats (Unix ms; 0 = none).
type ProfileView struct {
	ID             string         `json:"id"`
	Provider       string         `json:"provider,omitempty"`
	LastUsed       int64          `json:"lastUsed,omitempty"`
	ErrorCount     int            `json:"errorCount"`
	FailureCounts  map[string]int `json:"failureCounts,omitempty"`
	LastFailureAt  int64          `json:"lastFailureAt,omitempty"`
	CooldownUntil  int64          `json:"cooldownUntil,omitempty"`
	CooldownReason string         `json:"cooldownReason,omitempty"`
	CooldownModel  string         `json:"cooldownModel,omitempty"`
	DisabledUntil  int64          `json:"disabledUntil,omitempty"`
	DisabledReason string         `json:"disabledReason,omitempty"`
	// BlockedUntil ends a subscription block (a provider-reported reset):
	// BlockedReason subscription_limit, BlockedSource where the reset came
	// from, BlockedModel the model it is scoped to ("" = every model).
	BlockedUntil  int64  `json:"blockedUntil,omitempty"`
	BlockedReason string `json:"blockedReason,omitempty"`
	BlockedSource string `json:"blockedSource,omitempty"`
	BlockedModel  string `json:"blockedModel,omitempty"`
	// Usable is false while a window (cooldown, disable, block) is active.
	Usable bool `json:"usable"`
}

// TurnView is a turn's state: GET /v1/turns/{turn_id}.
type TurnView struct {
	TurnID  string `json:"turn_id"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	// Phase is running | waiting | succeeded | exhausted | stopped.
	Phase    string `json:"phase"`
	Attempts int    `json:"attempts"`
	Next     Next   `json:"next"`
}

// DecisionsRequest reads a page of model_fallback_decision records:
// GET /v1/decisions?agent=&from_seq=&since=&limit=.
type DecisionsRequest struct {
	// Agent is whose records are read ("" = the server's default agent).
	Agent string `json:"agent,omitempty"`
	// FromSeq is the first stream sequence read, inclusive (0 = from the
	// start): a page's NextFromSeq reads on.
	FromSeq uint64 `json:"from_seq,omitempty"`
	// Since, an RFC 3339 time, keeps only records decided at or after it
	// ("" = every record).
	Since string `json:"since,omitempty"`
	// Limit bounds the records of a page (0 = DefaultDecisionsLimit, at
	// most MaxDecisionsLimit); a page never splits a commit, so one
	// commit with more records than Limit is answered whole.
	Limit int `json:"limit,omitempty"`
	// Until, an RFC 3339 time, keeps only records decided before it
	// ("" = no bound).
	Until string `json:"until,omitempty"`
	// Provider, Reason and Outcome keep only records whose
	// candidateProvider, reason or decision is exactly that ("" = any).
	Provider string `json:"provider,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
}

// DecisionsView is a page of decision records in stream order; pass
// NextFromSeq as from_seq to read on.
type DecisionsView struct {
	Decisions []projections.DecisionRecord `json:"decisions"`
	// NextFromSeq is the from_seq of the next page: the sequence of the
	// first record left out, or, when the page holds the last records, the
	// sequence after Checkpoint.
	NextFromSeq uint64 `json:"next_from_seq"`
	// Checkpoint is the last stream sequence the projections had read.
	Checkpoint uint64 `json:"checkpoint"`
}

// Health is GET /healthz.
type Health struct {
	// Status is ok; degraded (HTTP 200: the service answers) when a part
	// listed in Degraded is impaired but turns can be served; unavailable
	// (HTTP 503) when the store cannot take writes.
	Status string `json:"status"`
	// Degraded names each impaired part in words, prefixed by the part:
	// "store: …" (NATS connection), "stream: …" (leader, replicas),
	// "projections: …" (behind, stopped, quarantined messages).
	Degraded []string `json:"degraded,omitempty"`
	// LastSeq is the stream's last sequence; Checkpoint the projections'
	// and Lag the difference.
	LastSeq    uint64   `json:"last_seq"`
	Checkpoint uint64   `json:"checkpoint"`
	Lag        uint64   `json:"lag"`
	Agents     []string `json:"agents"`
	Error      string   `json:"error,omitempty"`
	// Store is what the health check learned of the stream.
	Store *StoreHealth `json:"store,omitempty"`
	// Quarantined counts the stored messages the projections skipped
	// because they are not fledger commits, plus the runs of sequences
	// missing from the stream; QuarantinedSeqs names the first sequences
	// (at most 20) and Detail says it in words. Any makes Status
	// "degraded" (still HTTP 200: the service answers), except those at
	// or before QuarantineAckThrough (serve --ack-quarantined-through),
	// which are listed but acknowledged.
	Quarantined          int      `json:"quarantined,omitempty"`
	QuarantinedSeqs      []uint64 `json:"quarantined_seqs,omitempty"`
	Detail               string   `json:"detail,omitempty"`
	QuarantineAckThrough uint64   `json:"quarantine_ack_through,omitempty"`
}

// StoreHealth is the stream's state as the health check saw it.
type StoreHealth struct {
	Connected bool   `json:"connected"`
	Server    string `json:"server,omitempty"`
	// Leader is the server leading the stream ("" = none known).
	Leader   string `json:"leader,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
	// Current counts the replicas holding the stream up to date.
	Current int      `json:"current"`
	Lagging []string `json:"lagging,omitempty"`
}

// ErrorBody is every error's JSON shape.
type ErrorBody struct {
	// Error is a stable machine-readable code (e.g. unknown_turn); Detail
	// says what was wrong in words.
	Error  string `json:"error"`
	Detail string `json:"detail"`
	// Recorded, on a 503 unavailable, says what became of the request:
	// "no" (nothing was recorded: retry) or "unknown" (the store did not
	// confirm a write: re-send the same request, which is idempotent and
	// recorded once).
	Recorded string `json:"recorded,omitempty"`
}
