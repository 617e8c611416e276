package events

// ModelRef names one provider/model pair.
type ModelRef struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// String renders the pair as "provider/model".
func (m ModelRef) String() string {
	if m.Provider == "" && m.Model == "" {
		return ""
	}
	return m.Provider + "/" + m.Model
}

// SessionModelSelected records a model selection on a session
// (seed 000 "Selection source policy"). Source is one of user, default,
// auto, legacy, cron. A user selection (and legacy) is strict.
type SessionModelSelected struct {
	Session string   `json:"session"`
	Model   ModelRef `json:"model"`
	// Source is the modelOverrideSource: user | default | auto | legacy | cron.
	Source string `json:"source" enum:"user|default|auto|legacy|cron"`
	// Origin is the configured model an auto override fell back from
	// (stored auto overrides only).
	Origin *ModelRef `json:"origin,omitempty"`
	// Fallbacks, when non-nil, is the fallbacks override the selection
	// carries (cron payload.fallbacks); an empty list means strict.
	Fallbacks []ModelRef `json:"fallbacks,omitempty"`
	// HasFallbacks distinguishes an explicit empty Fallbacks list from none.
	HasFallbacks bool `json:"has_fallbacks,omitempty"`
}

func (SessionModelSelected) EventType() string         { return "SessionModelSelected" }
func (SessionModelSelected) EventAggregate() Aggregate { return AggSession }
func (e SessionModelSelected) EventKey() string        { return e.Session }

// SessionModelCleared records `/model default`, an auto override cleared on
// recovery, or one cleared by /new and /reset.
type SessionModelCleared struct {
	Session  string   `json:"session"`
	Previous ModelRef `json:"previous"`
	// PreviousSource is the source of the cleared selection.
	PreviousSource string `json:"previous_source,omitempty"`
	// Cause: default_command | auto_recovered | reset.
	Cause string `json:"cause" enum:"default_command|auto_recovered|reset"`
}

func (SessionModelCleared) EventType() string         { return "SessionModelCleared" }
func (SessionModelCleared) EventAggregate() Aggregate { return AggSession }
func (e SessionModelCleared) EventKey() string        { return e.Session }

// SessionAuthPinned records an auth-profile pin on a session (seed 000
// "Session stickiness"). Source auto: the automatically chosen profile,
// kept for cache warmth; user: `/model …@profile`, survives resets,
// compaction and cooldowns.
type SessionAuthPinned struct {
	Session   string `json:"session"`
	ProfileID string `json:"profile_id"`
	Provider  string `json:"provider"`
	Source    string `json:"source" enum:"auto|user"`
}

func (SessionAuthPinned) EventType() string         { return "SessionAuthPinned" }
func (SessionAuthPinned) EventAggregate() Aggregate { return AggSession }
func (e SessionAuthPinned) EventKey() string        { return e.Session }

// SessionAuthUnpinned records a pin being cleared. Cause: reset, compaction,
// cooldown, provider_mismatch, profile_removed, replaced, default_command.
type SessionAuthUnpinned struct {
	Session   string `json:"session"`
	ProfileID string `json:"profile_id"`
	Source    string `json:"source" enum:"auto|user"`
	Cause     string `json:"cause" enum:"reset|compaction|cooldown|provider_mismatch|profile_removed|replaced|default_command"`
}

func (SessionAuthUnpinned) EventType() string         { return "SessionAuthUnpinned" }
func (SessionAuthUnpinned) EventAggregate() Aggregate { return AggSession }
func (e SessionAuthUnpinned) EventKey() string        { return e.Session }

// SessionReset records /new or /reset (Kind "new" or "reset").
type SessionReset struct {
	Session string `json:"session"`
	Kind    string `json:"kind" enum:"new|reset"`
}

func (SessionReset) EventType() string         { return "SessionReset" }
func (SessionReset) EventAggregate() Aggregate { return AggSession }
func (e SessionReset) EventKey() string        { return e.Session }

// FallbackNoticeStateChanged records the session's persisted fallback-notice
// state (reference §10: fallbackNotice = {selectedModel, activeModel,
// reason}). Active empty means fallback is no longer active (cleared).
type FallbackNoticeStateChanged struct {
	Session  string `json:"session"`
	Selected string `json:"selected"`
	Active   string `json:"active,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Previous is the active model before the change ("" when none).
	Previous string `json:"previous,omitempty"`
	TurnID   string `json:"turn_id,omitempty"`
}

func (FallbackNoticeStateChanged) EventType() string         { return "FallbackNoticeStateChanged" }
func (FallbackNoticeStateChanged) EventAggregate() Aggregate { return AggSession }
func (e FallbackNoticeStateChanged) EventKey() string        { return e.Session }

// CompactionCompleted records a completed compaction; CompactionCount is the
// session's count after it.
type CompactionCompleted struct {
	Session         string `json:"session"`
	CompactionCount int    `json:"compaction_count"`
}

func (CompactionCompleted) EventType() string         { return "CompactionCompleted" }
func (CompactionCompleted) EventAggregate() Aggregate { return AggSession }
func (e CompactionCompleted) EventKey() string        { return e.Session }

// SessionPruned records session maintenance removing a session's stored
// state (OpenClaw `session.maintenance` in enforce mode, pruneStaleEntries;
// `openclaw sessions cleanup --enforce`): the session had no activity —
// no event of its own and no turn event of a turn of it — for longer than
// PruneAfterMs before the decision, and no turn of it was running. Every
// field of the session (selection, auth pin, fallback-notice state,
// compactions, the skip marks its turns left) is dropped, as a fresh
// session key has none; the session's next command or turn starts it
// again from nothing. A prune folded while a turn of the session is open
// (one begun while the prune was decided) is void: it changes nothing.
type SessionPruned struct {
	Session string `json:"session"`
	// Reason is why: stale (no activity for longer than PruneAfterMs).
	Reason string `json:"reason" enum:"stale"`
	// LastActiveAt is the session's last activity (Unix ms) as the
	// decision saw it: the time of its last event or of the last event
	// of one of its turns.
	LastActiveAt int64 `json:"last_active_at"`
	// PruneAfterMs is the maintenance age the decision applied
	// (pruneAfter, in milliseconds).
	PruneAfterMs int64 `json:"prune_after_ms"`
}

func (SessionPruned) EventType() string         { return "SessionPruned" }
func (SessionPruned) EventAggregate() Aggregate { return AggSession }
func (e SessionPruned) EventKey() string        { return e.Session }
