package scenario

// None is the value an expectation gives a field to say "absent": nobody
// answered (answered_by, answered_at), no profile, no summary or message,
// no pin, no cooldown model, no time. It differs from leaving the key out (or
// writing null, or ""), which leaves the field unchecked. In lists of
// attempts (tried_profiles) it stands for an attempt with no auth profile.
const None = "none"

// absent reads an expected text: None is the empty value it stands for.
func absent(want string) string {
	if want == None {
		return ""
	}
	return want
}

// TurnExpect is what a turn must do. Unset fields are not checked; a
// text field set to [None] expects the value to be absent.
type TurnExpect struct {
	// Outcome: succeeded | exhausted | stopped | switched | unfinished.
	Outcome string `json:"outcome,omitempty"`
	// SwitchedTo is the model a live switch outside the chain handed the
	// turn back to (outcome switched), None for none.
	SwitchedTo string `json:"switched_to,omitempty"`
	// AnsweredBy is "provider/model"; Profile the answering profile.
	AnsweredBy string `json:"answered_by,omitempty"`
	Profile    string `json:"profile,omitempty"`
	// Attempts is the number of provider calls.
	Attempts *int `json:"attempts,omitempty"`
	// Notices are the notices shown to the user, exactly, in order;
	// Suppressed those recorded but not shown (group and channel chats).
	Notices    *[]string `json:"notices,omitempty"`
	Suppressed *[]string `json:"suppressed,omitempty"`
	// Summary is the exhaustion summary as the user sees it; Disposition
	// and Reason describe a stop, Message is the stop's message (the
	// provider's error as it is surfaced, TurnStopped.message).
	Summary     string `json:"summary,omitempty"`
	Disposition string `json:"disposition,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
	// Profiles are usageStats right after the turn.
	Profiles map[string]ProfileExpect `json:"profiles,omitempty"`

	// Chain is the candidate chain the turn was built with
	// ("provider/model", in order; TurnStarted.chain).
	Chain *[]string `json:"chain,omitempty"`
	// TriedCandidates, TriedProfiles and AttemptKinds describe every
	// attempt, in order: its candidate, its auth profile (None: the
	// provider's default credentials) and its kind (first | retry |
	// rotation | fallback | probe | chain_retry | live_switch |
	// transport_recovery).
	TriedCandidates *[]string `json:"tried_candidates,omitempty"`
	TriedProfiles   *[]string `json:"tried_profiles,omitempty"`
	AttemptKinds    *[]string `json:"attempt_kinds,omitempty"`
	// Skips are the skipped candidates, in order, each as
	// "provider/model: <the skip text>" (CandidateSkipped.message).
	Skips *[]string `json:"skips,omitempty"`
	// SoonestCooldownExpiry is the exhaustion's model-aware soonest
	// cooldown expiry and AnsweredAt the moment the answer arrived: times
	// as in profile expectations, None = there is none.
	SoonestCooldownExpiry *string `json:"soonest_cooldown_expiry,omitempty"`
	AnsweredAt            *string `json:"answered_at,omitempty"`
	// Session is the turn's session state right after the turn.
	Session *SessionExpect `json:"session,omitempty"`
}

// Expect holds end-of-run expectations.
type Expect struct {
	// Profiles are usageStats at the end of the run.
	Profiles map[string]ProfileExpect `json:"profiles,omitempty"`
	// Sessions are session states at the end of the run, by session key.
	Sessions map[string]SessionExpect `json:"sessions,omitempty"`
}

// SessionExpect is a session's state, with the HTTP API's session view
// names (GET /v1/sessions/{agent}/{session}). Unset fields are not
// checked; "" or [None] expects the field absent.
type SessionExpect struct {
	// Model and Source are the stored selection (the session's model
	// override and its source user | default | auto | legacy | cron);
	// Origin the configured model a stored auto override fell back from.
	Model  *string `json:"model,omitempty"`
	Source *string `json:"source,omitempty"`
	Origin *string `json:"origin,omitempty"`
	// Pin is the pinned auth profile and PinSource auto | user.
	Pin       *string `json:"pin,omitempty"`
	PinSource *string `json:"pin_source,omitempty"`
	// NoticeSelected, NoticeActive and NoticeReason are the fallback-notice
	// state the session holds until a "cleared" notice (reference §10
	// fallbackNotice); NoticeActive None = no fallback active.
	NoticeSelected *string `json:"notice_selected,omitempty"`
	NoticeActive   *string `json:"notice_active,omitempty"`
	NoticeReason   *string `json:"notice_reason,omitempty"`
}

// ProfileExpect is expected usageStats (OpenClaw field names). Times are
// "+<duration>" from Start, RFC 3339, or [None]. Unset fields are not
// checked; a text field set to "" or [None] expects it absent (so
// cooldownModel: none is "no model scope", not the text "none").
type ProfileExpect struct {
	ErrorCount     *int           `json:"errorCount,omitempty"`
	FailureCounts  map[string]int `json:"failureCounts,omitempty"`
	CooldownUntil  *string        `json:"cooldownUntil,omitempty"`
	CooldownReason *string        `json:"cooldownReason,omitempty"`
	CooldownModel  *string        `json:"cooldownModel,omitempty"`
	DisabledUntil  *string        `json:"disabledUntil,omitempty"`
	DisabledReason *string        `json:"disabledReason,omitempty"`
	BlockedUntil   *string        `json:"blockedUntil,omitempty"`
	BlockedReason  *string        `json:"blockedReason,omitempty"`
	BlockedSource  *string        `json:"blockedSource,omitempty"`
	BlockedModel   *string        `json:"blockedModel,omitempty"`
	LastUsed       *string        `json:"lastUsed,omitempty"`
}
