package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// UnixMillis is a time column: Unix milliseconds, UTC, 0 = unset. It
// marshals to JSON as an RFC 3339 UTC string with milliseconds, or null.
type UnixMillis int64

// MarshalJSON renders the time as "2026-01-06T10:40:00.000Z" (null for 0).
func (t UnixMillis) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(FormatMillis(int64(t)))
}

// UnmarshalJSON reads what MarshalJSON writes: null (0) or an RFC 3339
// time, kept to the millisecond.
func (t *UnixMillis) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = 0
		return nil
	}
	var v time.Time
	if err := v.UnmarshalJSON(b); err != nil {
		return fmt.Errorf("projections: time %s: %w", b, err)
	}
	*t = UnixMillis(v.UnixMilli())
	return nil
}

// String is the RFC 3339 form ("" for 0).
func (t UnixMillis) String() string { return FormatMillis(int64(t)) }

// UsageStat is one usage_stats row: an auth profile's usageStats with
// OpenClaw's field names (reference §4).
type UsageStat struct {
	Agent     string `json:"agent"`
	ProfileID string `json:"profileId"`
	Provider  string `json:"provider"`
	// LastUsed and LastProbeAt are the last success.
	LastUsed    UnixMillis `json:"lastUsed,omitempty"`
	LastProbeAt UnixMillis `json:"lastProbeAt,omitempty"`
	// ErrorCount is the aggregate failure count since the last reset.
	ErrorCount    int        `json:"errorCount"`
	LastFailureAt UnixMillis `json:"lastFailureAt,omitempty"`
	// FailureCounts maps reason → count (empty map when none).
	FailureCounts map[string]int `json:"failureCounts"`
	// CooldownUntil ends the cooldown window; CooldownModel is the model it
	// is scoped to ("" = every model).
	CooldownUntil  UnixMillis `json:"cooldownUntil,omitempty"`
	CooldownReason string     `json:"cooldownReason,omitempty"`
	CooldownModel  string     `json:"cooldownModel,omitempty"`
	// DisabledUntil ends the disable window (billing | auth_permanent).
	DisabledUntil  UnixMillis `json:"disabledUntil,omitempty"`
	DisabledReason string     `json:"disabledReason,omitempty"`
	// BlockedUntil ends the subscription block: the provider-reported
	// reset (reference §4); BlockedReason is subscription_limit,
	// BlockedSource where the reset came from (codex_rate_limits |
	// reset_header | reset_text | provider_retry_after), BlockedModel the
	// model it is scoped to ("" = every model).
	BlockedUntil  UnixMillis `json:"blockedUntil,omitempty"`
	BlockedReason string     `json:"blockedReason,omitempty"`
	BlockedSource string     `json:"blockedSource,omitempty"`
	BlockedModel  string     `json:"blockedModel,omitempty"`
	// UpdatedAt and LastSeq are the time and stream sequence of the last
	// event folded into the row.
	UpdatedAt UnixMillis `json:"updatedAt"`
	LastSeq   uint64     `json:"lastSeq"`
}

// Status describes the profile at now in words: "disabled for 9m 59s
// (billing)", "blocked until 2026-03-05T10:00:00.000Z, 23h 59m 59s
// (subscription_limit from codex_rate_limits, model gpt-5)", "cooling down
// for 4m 10s (rate_limit, model gpt-5)", joined by "; ", or "ready". Remaining time is rounded up to the second.
// Expired windows read as ready (they are kept in the row, as OpenClaw
// keeps them until its next sweep).
func (u UsageStat) Status(now time.Time) string {
	n := now.UnixMilli()
	var parts []string
	if int64(u.DisabledUntil) > n {
		parts = append(parts, fmt.Sprintf("disabled for %s (%s)", FormatRemaining(int64(u.DisabledUntil)-n), u.DisabledReason))
	}
	if int64(u.BlockedUntil) > n {
		why := u.BlockedReason
		if u.BlockedSource != "" {
			why += " from " + u.BlockedSource
		}
		if u.BlockedModel != "" {
			why += ", model " + u.BlockedModel
		}
		parts = append(parts, fmt.Sprintf("blocked until %s, %s (%s)", u.BlockedUntil, FormatRemaining(int64(u.BlockedUntil)-n), why))
	}
	if int64(u.CooldownUntil) > n {
		why := u.CooldownReason
		if u.CooldownModel != "" {
			why += ", model " + u.CooldownModel
		}
		parts = append(parts, fmt.Sprintf("cooling down for %s (%s)", FormatRemaining(int64(u.CooldownUntil)-n), why))
	}
	if len(parts) == 0 {
		return "ready"
	}
	return strings.Join(parts, "; ")
}

// FormatRemaining renders a positive duration in ms, rounded up to the
// second, as "1h 2m 3s", "4m 10s" or "45s".
func FormatRemaining(ms int64) string {
	s := (ms + 999) / 1000
	h, m := s/3600, s%3600/60
	s %= 60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %dm %ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// StatsFilter selects usage_stats rows; empty fields match everything.
type StatsFilter struct {
	Agent    string
	Provider string
	// Profile matches profileId exactly.
	Profile string
}

// UsageStats returns the usage_stats rows matching f, by agent and
// profile id.
func (db *DB) UsageStats(ctx context.Context, f StatsFilter) ([]UsageStat, error) {
	var w where
	w.eq("agent", f.Agent)
	w.eq("provider", f.Provider)
	w.eq("profileId", f.Profile)
	rows, err := db.sql.QueryContext(ctx, "SELECT "+usageStats.list+" FROM usage_stats"+w.sql()+" ORDER BY agent, profileId", w.args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []UsageStat
	for rows.Next() {
		var u UsageStat
		var counts string
		if err := rows.Scan(&u.Agent, &u.ProfileID, &u.Provider, &u.LastUsed, &u.LastProbeAt, &u.ErrorCount,
			&u.LastFailureAt, &counts, &u.CooldownUntil, &u.CooldownReason, &u.CooldownModel,
			&u.DisabledUntil, &u.DisabledReason, &u.BlockedUntil, &u.BlockedReason, &u.BlockedSource, &u.BlockedModel,
			&u.UpdatedAt, &u.LastSeq); err != nil {
			return nil, db.wrap(err)
		}
		u.FailureCounts = map[string]int{}
		if err := json.Unmarshal([]byte(counts), &u.FailureCounts); err != nil {
			return nil, &DBError{Path: db.path, Detail: "usage_stats.failureCounts: " + err.Error(), Err: ErrCorrupt}
		}
		out = append(out, u)
	}
	return out, db.wrap(rows.Err())
}

// SessionSelection is one session_selection row, with OpenClaw's session
// field names where it has them.
type SessionSelection struct {
	Agent      string `json:"agent"`
	SessionKey string `json:"sessionKey"`
	// ProviderOverride/ModelOverride are the stored selection ("" = none),
	// ModelOverrideSource its source (user | default | auto | legacy |
	// cron).
	ProviderOverride    string `json:"providerOverride,omitempty"`
	ModelOverride       string `json:"modelOverride,omitempty"`
	ModelOverrideSource string `json:"modelOverrideSource,omitempty"`
	// AutoOrigin* is the configured model a stored auto override fell back
	// from.
	AutoOriginProvider string `json:"autoOriginProvider,omitempty"`
	AutoOriginModel    string `json:"autoOriginModel,omitempty"`
	// FallbacksOverride is the fallbacks override the selection carries
	// (JSON array of {provider, model}); "" when none, "[]" when strict.
	FallbacksOverride string `json:"fallbacksOverride,omitempty"`
	// AuthProfileOverride is the auth pin, with its provider and source
	// (auto | user).
	AuthProfileOverride         string `json:"authProfileOverride,omitempty"`
	AuthProfileOverrideProvider string `json:"authProfileOverrideProvider,omitempty"`
	AuthProfileOverrideSource   string `json:"authProfileOverrideSource,omitempty"`
	// FallbackNotice* is the notice state (reference §10): the selected and
	// active model and the reason; empty when no fallback is active.
	FallbackNoticeSelectedModel string `json:"fallbackNoticeSelectedModel,omitempty"`
	FallbackNoticeActiveModel   string `json:"fallbackNoticeActiveModel,omitempty"`
	FallbackNoticeReason        string `json:"fallbackNoticeReason,omitempty"`
	CompactionCount             int    `json:"compactionCount"`
	// LastReset is the kind of the last /new or /reset ("" = none) and
	// LastResetAt its time.
	LastReset   string     `json:"lastReset,omitempty"`
	LastResetAt UnixMillis `json:"lastResetAt,omitempty"`
	UpdatedAt   UnixMillis `json:"updatedAt"`
	LastSeq     uint64     `json:"lastSeq"`
}

// SessionFilter selects session_selection rows; empty fields match all.
type SessionFilter struct {
	Agent   string
	Session string
}

// Sessions returns the session_selection rows matching f, by agent and
// session key.
func (db *DB) Sessions(ctx context.Context, f SessionFilter) ([]SessionSelection, error) {
	var w where
	w.eq("agent", f.Agent)
	w.eq("sessionKey", f.Session)
	rows, err := db.sql.QueryContext(ctx, "SELECT "+sessionSelection.list+" FROM session_selection"+w.sql()+" ORDER BY agent, sessionKey", w.args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []SessionSelection
	for rows.Next() {
		var s SessionSelection
		var hasFB int64
		if err := rows.Scan(&s.Agent, &s.SessionKey, &s.ProviderOverride, &s.ModelOverride, &s.ModelOverrideSource,
			&s.AutoOriginProvider, &s.AutoOriginModel, &s.FallbacksOverride, &hasFB,
			&s.AuthProfileOverride, &s.AuthProfileOverrideProvider, &s.AuthProfileOverrideSource,
			&s.FallbackNoticeSelectedModel, &s.FallbackNoticeActiveModel, &s.FallbackNoticeReason,
			&s.CompactionCount, &s.LastReset, &s.LastResetAt, &s.UpdatedAt, &s.LastSeq); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, s)
	}
	return out, db.wrap(rows.Err())
}

// DecisionFilter selects fallback_decisions rows; zero fields match all.
type DecisionFilter struct {
	Agent   string
	Session string
	Turn    string
	// Reason matches the failure reason exactly, CandidateProvider the
	// candidate's provider, Decision the record's decision.
	Reason, CandidateProvider, Decision string
	// Since keeps decisions at or after this time, Until those before it.
	Since, Until time.Time
	// Limit keeps only the last Limit decisions (0 = all).
	Limit int
}

// Decisions returns the records of the decisions matching f, in stream
// order.
func (db *DB) Decisions(ctx context.Context, f DecisionFilter) ([]DecisionRecord, error) {
	var w where
	w.eq("agent", f.Agent)
	w.eq("sessionId", f.Session)
	w.eq("turnId", f.Turn)
	w.eq("reason", f.Reason)
	w.eq("candidateProvider", f.CandidateProvider)
	w.eq("decision", f.Decision)
	if !f.Since.IsZero() {
		w.add("at >= ?", f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		w.add("at < ?", f.Until.UnixMilli())
	}
	q := "SELECT " + fallbackDecisions.list + " FROM fallback_decisions" + w.sql()
	if f.Limit > 0 {
		q = "SELECT * FROM (" + q + " ORDER BY seq DESC, idx DESC LIMIT " + fmt.Sprint(f.Limit) + ")"
	}
	rows, err := db.sql.QueryContext(ctx, q+" ORDER BY seq, idx", w.args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []DecisionRecord
	for rows.Next() {
		d := DecisionRecord{Event: DecisionEvent}
		var prev string
		var isPrimary, matched, configured, allow int64
		if err := rows.Scan(&d.Seq, &d.Idx, &d.Time, &d.Agent, &d.TurnID, &d.SessionID, &d.Decision,
			&d.RequestedProvider, &d.RequestedModel, &d.CandidateProvider, &d.CandidateModel,
			&d.CandidateRouteOrigin, &d.Attempt, &d.Total, &d.Reason, &d.Status, &d.Code,
			&d.ErrorPreview, &d.ErrorHash, &d.NextCandidateProvider, &d.NextCandidateModel,
			&d.NextCandidateRouteOrigin, &isPrimary, &matched, &configured, &allow, &d.ProfileCount,
			&prev, &d.ConsoleMessage, &d.FallbackStepType, &d.FallbackStepFromModel, &d.FallbackStepToModel,
			&d.FallbackStepFromReason, &d.FallbackStepFromDetail, &d.FallbackStepChainPosition,
			&d.FallbackStepFinalOutcome); err != nil {
			return nil, db.wrap(err)
		}
		d.Tags = DecisionTags(d.Decision)
		d.IsPrimary, d.RequestedModelMatched, d.FallbackConfigured, d.AllowTransientProbe = isPrimary != 0, matched != 0, configured != 0, allow != 0
		if prev != "[]" && prev != "" {
			if err := json.Unmarshal([]byte(prev), &d.PreviousAttempts); err != nil {
				return nil, &DBError{Path: db.path, Detail: "fallback_decisions.previousAttempts: " + err.Error(), Err: ErrCorrupt}
			}
		}
		out = append(out, d)
	}
	return out, db.wrap(rows.Err())
}

// Turn is one turns row.
type Turn struct {
	Agent           string `json:"agent"`
	TurnID          string `json:"turnId"`
	SessionID       string `json:"sessionId"`
	Chat            string `json:"chat,omitempty"`
	RequestedModel  string `json:"requestedModel"`
	SelectionSource string `json:"selectionSource,omitempty"`
	Strict          bool   `json:"strict"`
	ConfigHash      string `json:"configHash,omitempty"`
	// AnsweredBy is "provider/model" of the answering candidate ("" unless
	// succeeded) and AnsweredProfileID its auth profile.
	AnsweredBy        string `json:"answeredBy,omitempty"`
	AnsweredProfileID string `json:"answeredProfileId,omitempty"`
	// Attempts is the number of provider calls started.
	Attempts int `json:"attempts"`
	// Outcome: succeeded | exhausted | stopped | switched | unfinished.
	Outcome     string     `json:"outcome"`
	Reason      string     `json:"reason,omitempty"`
	Disposition string     `json:"disposition,omitempty"`
	StartedAt   UnixMillis `json:"startedAt,omitempty"`
	EndedAt     UnixMillis `json:"endedAt,omitempty"`
	// DurationMs is the terminal event's duration (0 while unfinished).
	DurationMs int64  `json:"durationMs"`
	LastSeq    uint64 `json:"lastSeq"`
}

// TurnFilter selects turns rows; zero fields match all.
type TurnFilter struct {
	Agent   string
	Session string
	Turn    string
	Outcome string
	// Since keeps turns started at or after this time.
	Since time.Time
	// Limit keeps only the Limit most recently started turns (0 = all).
	Limit int
}

// Turns returns the turns matching f by start time.
func (db *DB) Turns(ctx context.Context, f TurnFilter) ([]Turn, error) {
	var w where
	w.eq("agent", f.Agent)
	w.eq("sessionId", f.Session)
	w.eq("turnId", f.Turn)
	w.eq("outcome", f.Outcome)
	if !f.Since.IsZero() {
		w.add("startedAt >= ?", f.Since.UnixMilli())
	}
	q := "SELECT " + turns.list + " FROM turns" + w.sql()
	if f.Limit > 0 {
		q = "SELECT * FROM (" + q + " ORDER BY startedAt DESC, agent DESC, turnId DESC LIMIT " + fmt.Sprint(f.Limit) + ")"
	}
	rows, err := db.sql.QueryContext(ctx, q+" ORDER BY startedAt, agent, turnId", w.args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []Turn
	for rows.Next() {
		var t Turn
		var rp, rm, ap, am string
		var strict, startSeq, openedAt int64
		var class string // the timeline's (TurnMarks)
		if err := rows.Scan(&t.Agent, &t.TurnID, &t.SessionID, &t.Chat, &rp, &rm, &t.SelectionSource, &strict,
			&t.ConfigHash, &ap, &am, &t.AnsweredProfileID, &t.Attempts, &t.Outcome, &t.Reason, &t.Disposition,
			&t.StartedAt, &t.EndedAt, &t.DurationMs, &t.LastSeq, &startSeq, &openedAt, &class); err != nil {
			return nil, db.wrap(err)
		}
		t.Strict = strict != 0
		t.RequestedModel = joinModel(rp, rm)
		t.AnsweredBy = joinModel(ap, am)
		out = append(out, t)
	}
	return out, db.wrap(rows.Err())
}

func joinModel(provider, model string) string {
	if provider == "" && model == "" {
		return ""
	}
	return provider + "/" + model
}

// Skipped is one skipped_events row: events of an unknown type skipped
// with [WithSkipUnknown].
type Skipped struct {
	Type     string `json:"type"`
	Count    int    `json:"count"`
	FirstSeq uint64 `json:"firstSeq"`
	LastSeq  uint64 `json:"lastSeq"`
}

// SkippedEvents returns the skipped_events rows by type.
func (db *DB) SkippedEvents(ctx context.Context) ([]Skipped, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+skippedEvents.list+" FROM skipped_events ORDER BY type")
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []Skipped
	for rows.Next() {
		var s Skipped
		if err := rows.Scan(&s.Type, &s.Count, &s.FirstSeq, &s.LastSeq); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, s)
	}
	return out, db.wrap(rows.Err())
}

// where accumulates a WHERE clause.
type where struct {
	conds []string
	args  []any
}

func (w *where) eq(col, v string) {
	if v != "" {
		w.add(col+" = ?", v)
	}
}

func (w *where) add(cond string, arg any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, arg)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
