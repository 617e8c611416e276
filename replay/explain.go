package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fledger/fledger/internal/redact"
	"sort"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// ErrTurnNotFound is returned by [Explain] when no TurnStarted has the id;
// ErrAmbiguousTurn when several agents have a turn with it (name one).
var (
	ErrTurnNotFound  = errors.New("replay: turn not found")
	ErrAmbiguousTurn = errors.New("replay: several agents have a turn with this id")
)

// TimeLayout is how explanations print times: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Explanation is one turn in plain words, built from its events alone (no
// projection), so it holds at any point of the stream. Every time is UTC;
// Offset fields are relative to the turn's start.
type Explanation struct {
	Agent   string `json:"agent"`
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	Chat    string `json:"chat"`
	// StartedAt is the turn's start; ConfigHash the config it ran under.
	StartedAt  time.Time `json:"started_at"`
	ConfigHash string    `json:"config_hash"`
	// Requested is the model the turn started from and SelectionSource
	// why (default | agent | user | legacy | auto | cron); Why says it in
	// words, with what that source means for the chain.
	Requested       string       `json:"requested"`
	SelectionSource string       `json:"selection_source"`
	Strict          bool         `json:"strict"`
	AutoOriginProbe bool         `json:"auto_origin_probe,omitempty"`
	Why             string       `json:"why"`
	Chain           []ChainEntry `json:"chain"`
	AttemptLimit    int          `json:"attempt_limit"`
	PinnedProfile   string       `json:"pinned_profile,omitempty"`
	PinSource       string       `json:"pin_source,omitempty"`
	Seed            uint64       `json:"seed"`
	// Steps are the turn's events in words, in stream order.
	Steps []Step `json:"steps"`
	// Notices are the user-visible notices (Delivered false = recorded,
	// not shown in a group or channel chat).
	Notices []NoticeRecord `json:"notices"`
	// Outcome is succeeded | exhausted | stopped | unfinished; End says it
	// in words; Attempts and DurationMs are from the closing event.
	Outcome    string `json:"outcome"`
	End        string `json:"end"`
	Attempts   int    `json:"attempts"`
	DurationMs int64  `json:"duration_ms"`
	// AnsweredBy and Profile name who answered (succeeded only).
	AnsweredBy string `json:"answered_by,omitempty"`
	Profile    string `json:"profile,omitempty"`

	failures int                            // AttemptFailed events seen
	before   map[string]policy.ProfileState // profile state before a profile event, by event id
}

// ChainEntry is one candidate of the chain with its route origin
// (requested | configured-fallback | configured-primary).
type ChainEntry struct {
	Position    int    `json:"position"`
	Model       string `json:"model"`
	RouteOrigin string `json:"route_origin"`
}

// Step is one event of the turn in words. Details are further lines
// (error text, evidence, why); Event is the recorded payload.
type Step struct {
	Seq     uint64          `json:"seq"`
	Index   int             `json:"index"`
	At      time.Time       `json:"at"`
	Offset  string          `json:"offset"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Details []string        `json:"details,omitempty"`
	Event   json.RawMessage `json:"event"`
}

// NoticeRecord is a notice as the user saw it (or would have).
type NoticeRecord struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

// Explain reads the stream up to its end and explains turn turnID of
// agent ("" = whichever agent has it; [ErrAmbiguousTurn] when several
// do). It returns [ErrTurnNotFound] when no TurnStarted has the id.
func Explain(ctx context.Context, src Source, agent, turnID string) (*Explanation, error) {
	byAgent := map[string][]events.Event{}
	configs := map[string]json.RawMessage{}      // agent + "\x00" + hash → canonical config
	profiles := map[string]policy.ProfileState{} // agent + "\x00" + profile id → folded usageStats
	before := map[string]policy.ProfileState{}   // event id → its profile's state just before it
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		for _, ev := range c.Events {
			if agent != "" && ev.Agent != agent {
				continue
			}
			if ca, ok := ev.Data.(events.ConfigApplied); ok {
				configs[ev.Agent+"\x00"+ca.Hash] = ca.Config
			}
			mine := (ev.Aggregate == events.AggTurn && ev.Key == turnID) || ev.CorrelationID == turnID
			if ev.Aggregate == events.AggProfile {
				k := ev.Agent + "\x00" + ev.Key
				if mine {
					before[ev.ID] = profiles[k]
				}
				profiles[k] = policy.EvolveProfile(profiles[k], ev.Data)
			}
			if mine {
				byAgent[ev.Agent] = append(byAgent[ev.Agent], ev)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var agents []string
	for a, evs := range byAgent {
		for _, ev := range evs {
			if _, ok := ev.Data.(events.TurnStarted); ok {
				agents = append(agents, a)
				break
			}
		}
	}
	sort.Strings(agents)
	switch len(agents) {
	case 0:
		return nil, fmt.Errorf("%w: %q", ErrTurnNotFound, turnID)
	case 1:
		x := explainWith(agents[0], turnID, byAgent[agents[0]], before)
		x.strictAgentWhy(configs[agents[0]+"\x00"+x.ConfigHash])
		return x, nil
	}
	return nil, fmt.Errorf("%w: %q is a turn of %s; name one with --agent", ErrAmbiguousTurn, turnID, strings.Join(agents, ", "))
}

// explain builds the explanation from the turn's events (those of its
// aggregate and those correlated with it), in stream order.
func explain(agent, turnID string, evs []events.Event) *Explanation {
	return explainWith(agent, turnID, evs, nil)
}

// explainWith is explain with the state of each profile just before each
// of the turn's profile events (by event id; nil when not known), so a
// success says what it kept.
func explainWith(agent, turnID string, evs []events.Event, before map[string]policy.ProfileState) *Explanation {
	x := &Explanation{Agent: agent, TurnID: turnID, Outcome: "unfinished", Notices: []NoticeRecord{}, before: before}
	var start int64
	for _, ev := range evs {
		if ts, ok := ev.Data.(events.TurnStarted); ok {
			start = ts.StartedAt
		}
	}
	x.StartedAt = events.FromMillis(start)
	for _, ev := range evs {
		raw, _, _ := canonical(ev.Data)
		st := Step{Seq: ev.Seq, Index: ev.Index, At: ev.At, Offset: offset(events.Millis(ev.At), start), Type: ev.Type, Event: raw}
		x.describe(&st, ev, start)
		if st.Text != "" {
			x.Steps = append(x.Steps, st)
		}
	}
	if x.Steps == nil {
		x.Steps = []Step{}
	}
	return x
}

// describe fills a step's words and the explanation's summary fields.
func (x *Explanation) describe(st *Step, ev events.Event, start int64) {
	at := func(ms int64) string {
		if ms == 0 {
			return "-"
		}
		return events.FromMillis(ms).Format(TimeLayout) + " (" + offset(ms, start) + ")"
	}
	switch e := ev.Data.(type) {
	case events.TurnStarted:
		x.Session, x.Chat, x.ConfigHash = e.Session, e.Chat, e.ConfigHash
		x.Requested, x.SelectionSource, x.Strict, x.AutoOriginProbe = e.Requested.String(), e.SelectionSource, e.Strict, e.AutoOriginProbe
		x.AttemptLimit, x.PinnedProfile, x.PinSource, x.Seed = e.AttemptLimit, e.PinnedProfile, e.PinSource, e.Seed
		var names []string
		for i, c := range e.Chain {
			m := c.Provider + "/" + c.Model
			x.Chain = append(x.Chain, ChainEntry{Position: i + 1, Model: m, RouteOrigin: c.RouteOrigin})
			names = append(names, m)
		}
		x.Why = why(e)
		strict := ""
		if e.Strict {
			strict = ", strict"
		}
		st.Kind, st.Text = "start", fmt.Sprintf("turn started: chain %s (source %s%s)", strings.Join(names, " → "), e.SelectionSource, strict)
	case events.AttemptStarted:
		st.Kind = "attempt"
		st.Text = fmt.Sprintf("attempt #%d %s: %s/%s%s", e.Attempt, e.Kind, e.Provider, e.Model, atProfile(e.ProfileID))
		st.Details = append(st.Details, attemptWhy(e))
	case events.AttemptSucceeded:
		st.Kind, st.Text = "ok", fmt.Sprintf("✓ %s/%s%s answered (%d ms)", e.Provider, e.Model, atProfile(e.ProfileID), e.LatencyMs)
	case events.AttemptFailed:
		x.failures++
		st.Kind = "failed"
		st.Text = fmt.Sprintf("✗ %s/%s%s failed (%d ms): %s%s, disposition %s", e.Provider, e.Model, atProfile(e.ProfileID),
			e.LatencyMs, e.Reason, httpStatus(e.Status), e.Disposition)
		if msg := firstNonEmpty(e.Error.MessagePreview, e.Error.BodyPreview); msg != "" {
			st.Details = append(st.Details, "provider error (redacted): "+oneLine(msg, 200))
		}
		var ids []string
		for _, kv := range [][2]string{{"code", e.Error.Code}, {"type", e.Error.Type}, {"name", e.Error.Name}} {
			if kv[1] != "" {
				ids = append(ids, kv[0]+" "+kv[1])
			}
		}
		if len(ids) > 0 {
			st.Details = append(st.Details, "provider says: "+strings.Join(ids, ", "))
		}
		ev := "classified " + e.Reason + " by rule " + firstNonEmpty(e.Evidence.Rule, "?")
		var where []string
		if e.Evidence.Field != "" {
			where = append(where, "field "+e.Evidence.Field)
		}
		if e.Evidence.Source != "" {
			where = append(where, "source "+e.Evidence.Source)
		}
		if len(where) > 0 {
			ev += " (" + strings.Join(where, ", ") + ")"
		}
		if e.Evidence.Match != "" {
			ev += fmt.Sprintf(", matched %q", oneLine(e.Evidence.Match, 120))
		}
		st.Details = append(st.Details, ev)
		if e.RetryAfterMs > 0 {
			st.Details = append(st.Details, fmt.Sprintf("provider asked to retry after %d ms", e.RetryAfterMs))
		}
		st.Details = append(st.Details, resetDetails(e.Reset, e.LongWindow, at)...)
		if len(e.RequestSizeCeiling) == 2 {
			st.Details = append(st.Details, fmt.Sprintf("request-size ceiling: limit %d tokens, requested %d: never retried on this profile", e.RequestSizeCeiling[0], e.RequestSizeCeiling[1]))
		}
		if e.ReplayUnsafe {
			st.Details = append(st.Details, "output or a tool call had started: the attempt is not replay-safe (no retry, no whole-chain retry)")
		}
	case events.RetryScheduled:
		st.Kind = "retry"
		st.Text = fmt.Sprintf("retry %d/%d on the same profile in %d ms, at %s", e.Retry, e.Budget, e.DelayMs, at(e.ResumeAt))
		d := fmt.Sprintf("back-off %d ms jittered with seed %d", e.BaseMs, e.JitterSeed)
		if e.RetryAfterMs > 0 {
			d += fmt.Sprintf("; retry-after %d ms is the floor", e.RetryAfterMs)
		}
		if e.WindowEndsAt > 0 {
			d += "; retry window ends " + at(e.WindowEndsAt)
		}
		st.Details = append(st.Details, d)
	case events.ProfileFailureRecorded:
		st.Kind = "profile"
		var what []string
		if e.CooldownUntil > 0 {
			scope := ""
			if e.CooldownModel != "" {
				scope = ", model " + e.CooldownModel + " only"
			}
			what = append(what, fmt.Sprintf("cooldown until %s (%s%s)", at(e.CooldownUntil), e.CooldownReason, scope))
		}
		if e.DisabledUntil > 0 {
			what = append(what, fmt.Sprintf("disabled until %s (%s)", at(e.DisabledUntil), e.DisabledReason))
		}
		if e.BlockedUntil > 0 {
			what = append(what, blockText(e, at))
		}
		if e.WindowKept {
			what = append(what, "the active window is kept (a new failure never extends or shortens it)")
		}
		if len(what) == 0 {
			what = append(what, "counted, no cooldown")
		}
		st.Text = fmt.Sprintf("profile %s: %s failure #%d → %s", e.ProfileID, e.Reason, e.ErrorCount, strings.Join(what, ", "))
		if e.CountersReset {
			st.Details = append(st.Details, "counters were reset first (the failure window had passed)")
		}
		st.Details = append(st.Details, blockDetails(e, at)...)
	case events.ProfileSucceeded:
		st.Kind = "profile"
		st.Text, st.Details = successText(e, at)
	case events.ProfileUsed:
		st.Kind = "profile"
		st.Text, st.Details = usedText(e, x.before[ev.ID], e.LastUsed, at)
	case events.CandidateSkipped:
		st.Kind = "skip"
		st.Text = fmt.Sprintf("skip %s/%s: %s (%s, %s)", e.Provider, e.Model, oneLine(e.Message, 200), e.Reason, e.Decision)
		if e.SoonestExpiry > 0 {
			st.Details = append(st.Details, "soonest profile expiry "+at(e.SoonestExpiry))
		}
	case events.FallbackStepped:
		switch e.Decision {
		case policy.DecisionCandidateFailed:
			to := firstNonEmpty(e.FallbackStepToModel, "end of chain")
			st.Kind, st.Text = "fallback", fmt.Sprintf("↪ fallback %s → %s (%s)", e.FallbackStepFromModel, to, e.Reason)
		case policy.DecisionProbeCandidate:
			st.Kind = "probe"
			st.Text = fmt.Sprintf("probe %s/%s although its profiles are unavailable (%s)", e.CandidateProvider, e.CandidateModel, e.Reason)
			if e.IsPrimary {
				st.Details = append(st.Details, "the primary is probed when the probe throttle allows and its cooldown is near its end (or it is rate limited with no provider reset window active, or the chain has one candidate)")
			} else {
				st.Details = append(st.Details, "a fallback candidate uses the provider's one transient probe slot of the run")
			}
		case policy.DecisionCandidateSucceeded:
			st.Kind, st.Text = "decision", fmt.Sprintf("decision record: %s/%s succeeded at chain position %d", e.CandidateProvider, e.CandidateModel, e.Attempt)
		}
	case events.ChainRetryScheduled:
		st.Kind = "chain_retry"
		st.Text = fmt.Sprintf("every candidate overloaded: whole-chain retry round %d in %d ms, at %s", e.Round, e.DelayMs, at(e.ResumeAt))
		st.Details = append(st.Details, fmt.Sprintf("%d ms waited in chain retries before this one", e.WaitedMs))
	case events.NoticeSent:
		x.Notices = append(x.Notices, NoticeRecord{Kind: e.Kind, Text: e.Text, Delivered: e.Delivered})
		st.Kind = "notice"
		if e.Delivered {
			st.Text = "user sees: " + e.Text
		} else {
			st.Text = fmt.Sprintf("notice recorded, not shown in a %s chat: %s", x.Chat, e.Text)
		}
	case events.SessionAuthPinned:
		st.Kind, st.Text = "session", fmt.Sprintf("session pin → %s (%s)", e.ProfileID, e.Source)
	case events.SessionAuthUnpinned:
		st.Kind, st.Text = "session", fmt.Sprintf("session pin %s cleared (%s)", e.ProfileID, e.Cause)
	case events.SessionModelCleared:
		st.Kind, st.Text = "session", fmt.Sprintf("session selection %s cleared (%s)", e.Previous, e.Cause)
	case events.FallbackNoticeStateChanged:
		st.Kind = "session"
		if e.Active == "" {
			st.Text = fmt.Sprintf("fallback-notice state cleared: back on %s (was %s)", e.Selected, e.Previous)
		} else {
			st.Text = fmt.Sprintf("fallback-notice state: selected %s, active %s (%s)", e.Selected, e.Active, e.Reason)
		}
	case events.TurnSucceeded:
		x.Outcome, x.Attempts, x.DurationMs = "succeeded", e.Attempts, e.DurationMs
		x.AnsweredBy, x.Profile = e.AnsweredBy.String(), e.ProfileID
		x.End = fmt.Sprintf("succeeded: answered by %s%s after %d %s (%s)", e.AnsweredBy, atProfile(e.ProfileID), e.Attempts, plural(e.Attempts, "attempt"), msDur(e.DurationMs))
		st.Kind, st.Text = "end", x.End
	case events.TurnExhausted:
		x.Outcome, x.Attempts, x.DurationMs = "exhausted", len(e.Attempts), e.DurationMs
		x.End = fmt.Sprintf("exhausted (%s): %s", msDur(e.DurationMs), redact.String(e.Summary))
		if len(e.Attempts) == 1 {
			x.End = singleAttemptEnd(e, x.failures > 0)
			st.Details = append(st.Details, "recorded summary (not shown with a single attempt): "+oneLine(e.Summary, 200))
		}
		st.Kind, st.Text = "end", x.End
		if e.SoonestCooldownExpiry > 0 {
			st.Details = append(st.Details, "soonest cooldown expiry "+at(e.SoonestCooldownExpiry))
		}
	case events.TurnStopped:
		x.Outcome, x.Attempts, x.DurationMs = "stopped", e.Attempts, e.DurationMs
		x.End = fmt.Sprintf("stopped after %d %s (%s): disposition %s, reason %s", e.Attempts, plural(e.Attempts, "attempt"), msDur(e.DurationMs), e.Disposition, e.Reason)
		if e.Message != "" {
			x.End += ": " + oneLine(e.Message, 160)
		}
		st.Kind, st.Text = "end", x.End
	}
}

// why says why the chain looked as it did (seed 000 "Selection source
// policy", "Candidate chain rules").
func why(e events.TurnStarted) string {
	var s string
	switch e.SelectionSource {
	case string(policy.SourceDefault):
		s = "no model is stored on the session, so the turn requests the configured default primary (agents.defaults.model.primary); the chain adds agents.defaults.model.fallbacks in order, then the primary, without duplicates"
	case string(policy.SourceAgent):
		s = "the agent's own primary (agents.entries.<id>.model) is requested; it is strict unless the agent's model object lists its own fallbacks"
	case string(policy.SourceUser):
		s = "the session holds a user selection (/model): a user's choice is strict, so no other model is tried"
	case string(policy.SourceLegacy):
		s = "the session holds a model with no recorded source (legacy override), treated as a user selection: strict"
	case string(policy.SourceAuto):
		s = "the session holds an automatic override (an imported fallback); it uses the configured fallback chain"
		if e.AutoOriginProbe {
			s += ", and this turn first probes the override's origin " + e.Requested.String() + " (every 5 minutes)"
		}
	case string(policy.SourceCron):
		s = "a cron job's payload model is a job primary, not a user override: it keeps the configured fallbacks unless the payload lists its own"
	default:
		s = "selection source " + e.SelectionSource
	}
	if e.Strict {
		s += ". The chain is this model alone"
	}
	if e.PinnedProfile != "" {
		s += fmt.Sprintf(". The session's %s pin %s is tried first on its provider", e.PinSource, e.PinnedProfile)
	}
	return s + "."
}

func attemptWhy(e events.AttemptStarted) string {
	switch policy.AttemptKind(e.Kind) {
	case policy.KindFirst:
		return "the requested model, with the first usable profile of the order"
	case policy.KindRetry:
		return "the same model and profile again after the back-off (transient error)"
	case policy.KindRotation:
		return "another profile of the same provider (rotation before model fallback)"
	case policy.KindFallback:
		return fmt.Sprintf("the next candidate of the chain (position %d)", e.CandidateIndex+1)
	case policy.KindProbe:
		if e.ProbeSlot {
			return "a cooldown probe using the provider's transient probe slot"
		}
		return "a cooldown probe of the primary"
	case policy.KindChainRetry:
		return fmt.Sprintf("whole-chain overload retry, round %d", e.Round)
	}
	return e.Kind
}

// offset renders ms relative to start as "+1.5s" ("-" for 0).
func offset(ms, start int64) string {
	if ms == 0 {
		return "-"
	}
	d := time.Duration(ms-start) * time.Millisecond
	if d < 0 {
		return "-" + d.Abs().String()
	}
	return "+" + d.String()
}

func atProfile(p string) string {
	if p == "" {
		return ""
	}
	return " @" + p
}

func httpStatus(s int) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprintf(" (HTTP %d)", s)
}

func msDur(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// oneLine flattens provider text to one line of at most n runes. It
// redacts again: events written before a redaction rule existed keep what
// that older redactor missed, and redacting is idempotent.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
