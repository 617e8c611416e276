package scenario

// TurnExpect is what a turn must do. Unset fields are not checked.
type TurnExpect struct {
	// Outcome: succeeded | exhausted | stopped | unfinished.
	Outcome string `json:"outcome,omitempty"`
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
	// and Reason describe a stop.
	Summary     string `json:"summary,omitempty"`
	Disposition string `json:"disposition,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Profiles are usageStats right after the turn.
	Profiles map[string]ProfileExpect `json:"profiles,omitempty"`
}

// Expect holds end-of-run expectations.
type Expect struct {
	// Profiles are usageStats at the end of the run.
	Profiles map[string]ProfileExpect `json:"profiles,omitempty"`
}

// ProfileExpect is expected usageStats (OpenClaw field names). Times are
// "+<duration>" from Start, RFC 3339, or "none". Unset fields are not
// checked.
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
