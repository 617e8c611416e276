package replay

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
)

// describe fills a step's words and the explanation's summary fields, one
// case per type of the catalog. A type that tells nothing about the turn
// (the config, an operator's clear or order, a selection, a reset or a
// compaction) leaves the step without words, so it is not shown. describe
// reports false for a type it does not know
// (TestExplain_DescribesEveryCatalogType).
func (x *Explanation) describe(st *Step, ev events.Event, start int64) bool {
	at := func(ms int64) string {
		if ms == 0 {
			return "-"
		}
		return events.FromMillis(ms).Format(TimeLayout) + " (" + offset(ms, start) + ")"
	}
	switch e := ev.Data.(type) {
	case events.TurnStarted:
		x.started(st, e)
	case events.AttemptStarted:
		if policy.AttemptKind(e.Kind) == policy.KindTransportRecovery {
			x.recoveries++
		}
		st.Kind = "attempt"
		st.Text = fmt.Sprintf("attempt #%d %s: %s/%s%s", e.Attempt, e.Kind, e.Provider, e.Model, atProfile(e.ProfileID))
		st.Details = append(st.Details, attemptWhy(e))
		if policy.AttemptKind(e.Kind) == policy.KindProbe && e.CandidateIndex == 0 {
			x.probes[e.Provider] = e.StartedAt
		}
	case events.AttemptSucceeded:
		st.Kind, st.Text = "ok", fmt.Sprintf("✓ %s/%s%s answered (%d ms)", e.Provider, e.Model, atProfile(e.ProfileID), e.LatencyMs)
	case events.AttemptFailed:
		x.failures++
		st.Kind = "failed"
		st.Text, st.Details = failedText(e, at)
		if policy.RulesOf(x.rules) >= policy.RulesV3 {
			if why := transportWhy(e, x.recoveries, x.rest); why != "" {
				st.Details = append(st.Details, why)
			}
		}
	case events.RetryScheduled:
		st.Kind = "retry"
		st.Text, st.Details = retryText(e, at)
	case events.ProfileFailureRecorded:
		st.Kind = "profile"
		st.Text, st.Details = failureText(e, at)
	case events.ProfileSucceeded:
		st.Kind = "profile"
		st.Text, st.Details = successText(e, at)
	case events.ProfileUsed:
		st.Kind = "profile"
		st.Text, st.Details = usedText(e, x.ctx.before[ev.ID], e.LastUsed, at)
	case events.CandidateSkipped:
		x.skipped(st, e, events.Millis(ev.At), at)
	case events.FallbackStepped:
		fallbackStep(st, e, jumpAfter(x.rest))
	case events.ChainRetryScheduled:
		st.Kind = "chain_retry"
		st.Text = fmt.Sprintf("every candidate overloaded: whole-chain retry round %d in %d ms, at %s", e.Round, e.DelayMs, at(e.ResumeAt))
		st.Details = append(st.Details, fmt.Sprintf("%d ms waited in chain retries before this one", e.WaitedMs))
	case events.NoticeSent:
		x.notice(st, e)
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
		x.exhausted(st, e, events.Millis(ev.At), at)
	case events.TurnStopped:
		x.Outcome, x.Attempts, x.DurationMs = "stopped", e.Attempts, e.DurationMs
		x.End = fmt.Sprintf("stopped after %d %s (%s): disposition %s, reason %s", e.Attempts, plural(e.Attempts, "attempt"), msDur(e.DurationMs), e.Disposition, e.Reason)
		if e.Message != "" {
			x.End += ": " + oneLine(e.Message, 160)
		}
		st.Kind, st.Text = "end", x.End
		if why := stopWhy(e); why != "" {
			st.Details = append(st.Details, why)
		}
	case events.LiveSwitchMarked:
		st.Kind = "live_switch"
		st.Text = markText(e, x.ctx.defaultMarks[ev.ID], x.rest)
	case events.TurnSwitched:
		x.Outcome, x.Attempts, x.DurationMs = "switched", e.Attempts, e.DurationMs
		x.End = fmt.Sprintf("switched after %d %s (%s): the user selected %s%s, outside the chain; the same turn runs again on it", e.Attempts, plural(e.Attempts, "attempt"), msDur(e.DurationMs), e.Model, atProfile(e.ProfileID))
		st.Kind, st.Text = "end", x.End
		st.Details = append(st.Details, e.Message)
	case events.SessionReset:
		// Only a /new or /reset stored while the turn ran reaches here.
		st.Kind, st.Text = "command", resetText(e, x.rules)
	case events.SessionModelSelected:
		// A racing selection ([racingSelections]) has words; the
		// begin's own selection (correlated with the turn) has none.
		if r, ok := x.ctx.racing[ev.ID]; ok {
			st.Kind, st.Text = "command", racingText(e, ev.Seq, r, x.rest)
		}
	case events.ConfigApplied, events.ProfileCleared,
		events.CompactionCompleted, events.AuthOrderSet, events.SessionPruned:
		// Not part of a turn's story: no words, no step.
	default:
		return false
	}
	return true
}

// started records the turn's start: the chain, why it looked so, and the
// rules it ran under.
func (x *Explanation) started(st *Step, e events.TurnStarted) {
	x.Session, x.Chat, x.ConfigHash = e.Session, e.Chat, e.ConfigHash
	x.Requested, x.SelectionSource, x.Strict, x.AutoOriginProbe = e.Requested.String(), e.SelectionSource, e.Strict, e.AutoOriginProbe
	x.AttemptLimit, x.PinnedProfile, x.PinSource, x.Seed = e.AttemptLimit, e.PinnedProfile, e.PinSource, e.Seed
	x.rules = e.Rules
	x.cfg = x.policyConfig(e.ConfigHash)
	payload := cronPayloadChain(e, x.cfg)
	var names []string
	for i, c := range e.Chain {
		m := c.Provider + "/" + c.Model
		ce := ChainEntry{Position: i + 1, Model: m, RouteOrigin: c.RouteOrigin}
		switch {
		case c.RouteOrigin != policy.OriginConfiguredFallback:
		case e.FallbacksOverride:
			ce.Label = LabelOverrideFallback
		case payload:
			ce.Label = LabelCronFallback
		}
		x.Chain = append(x.Chain, ce)
		names = append(names, m)
	}
	x.Why = why(e, payload)
	strict := ""
	if e.Strict {
		strict = ", strict"
	}
	st.Kind, st.Text = "start", fmt.Sprintf("turn started: chain %s (source %s%s)", strings.Join(names, " → "), e.SelectionSource, strict)
}

// failedText says how an attempt failed: the redacted provider error, how
// it was classified and on what evidence, and what it asked for.
func failedText(e events.AttemptFailed, at func(int64) string) (string, []string) {
	text := fmt.Sprintf("✗ %s/%s%s failed (%d ms): %s%s, disposition %s", e.Provider, e.Model, atProfile(e.ProfileID),
		e.LatencyMs, e.Reason, httpStatus(e.Status), e.Disposition)
	var details []string
	if msg := firstNonEmpty(e.Error.MessagePreview, e.Error.BodyPreview); msg != "" {
		details = append(details, "provider error (redacted): "+oneLine(msg, 200))
	}
	var ids []string
	for _, kv := range [][2]string{{"code", e.Error.Code}, {"type", e.Error.Type}, {"name", e.Error.Name}} {
		if kv[1] != "" {
			ids = append(ids, kv[0]+" "+kv[1])
		}
	}
	if len(ids) > 0 {
		details = append(details, "provider says: "+strings.Join(ids, ", "))
	}
	details = append(details, evidenceText(e))
	if e.RetryAfterMs > 0 {
		details = append(details, fmt.Sprintf("provider asked to retry after %d ms", e.RetryAfterMs))
	}
	details = append(details, resetDetails(e.Reset, e.LongWindow, at)...)
	if len(e.RequestSizeCeiling) == 2 {
		details = append(details, fmt.Sprintf("request-size ceiling: limit %d tokens, requested %d: never retried on this profile", e.RequestSizeCeiling[0], e.RequestSizeCeiling[1]))
	}
	if e.ReplayUnsafe {
		details = append(details, "output or a tool call had started: the attempt is not replay-safe (no retry, no whole-chain retry)")
	}
	return text, details
}

// evidenceText names the classifier rule that decided a failure and what
// it matched.
func evidenceText(e events.AttemptFailed) string {
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
	return ev
}

// retryText says when a retry on the same profile runs and why then.
func retryText(e events.RetryScheduled, at func(int64) string) (string, []string) {
	text := fmt.Sprintf("retry %d/%d on the same profile in %d ms, at %s", e.Retry, e.Budget, e.DelayMs, at(e.ResumeAt))
	d := fmt.Sprintf("back-off %d ms jittered with seed %d", e.BaseMs, e.JitterSeed)
	if e.RetryAfterMs > 0 {
		d += fmt.Sprintf("; retry-after %d ms is the floor", e.RetryAfterMs)
	}
	if e.WindowEndsAt > 0 {
		d += "; retry window ends " + at(e.WindowEndsAt)
	}
	return text, []string{d}
}

// failureText says what a counted failure did to its profile: the
// windows it opened or kept.
func failureText(e events.ProfileFailureRecorded, at func(int64) string) (string, []string) {
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
	text := fmt.Sprintf("profile %s: %s failure #%d → %s", e.ProfileID, e.Reason, e.ErrorCount, strings.Join(what, ", "))
	var details []string
	if e.CountersReset {
		details = append(details, "counters were reset first (the failure window had passed)")
	}
	return text, append(details, blockDetails(e, at)...)
}

// skipped words a skipped candidate (at now): its text, how far its
// soonest profile expiry is, and, for a primary, when the probe throttle
// is why it was not probed.
func (x *Explanation) skipped(st *Step, e events.CandidateSkipped, now int64, at func(int64) string) {
	st.Kind = "skip"
	st.Text = fmt.Sprintf("skip %s/%s: %s (%s, %s)", e.Provider, e.Model, oneLine(e.Message, 200), e.Reason, e.Decision)
	if e.SoonestExpiry > 0 {
		st.Details = append(st.Details, fmt.Sprintf("soonest profile expiry %s, %s after this skip", at(e.SoonestExpiry), msDur(e.SoonestExpiry-now)))
	}
	if d := x.throttleDetail(e, now, at); d != "" {
		st.Details = append(st.Details, d)
	}
}

// fallbackStep words a model_fallback_decision record: a fallback, a
// probe, or the record of a success. jump is the model a live switch
// jumps to right after this record ("" = none): the candidate_failed
// record before it names the jump's target, and is worded as the jump's.
func fallbackStep(st *Step, e events.FallbackStepped, jump string) {
	switch e.Decision {
	case policy.DecisionCandidateFailed:
		switch {
		case jump != "" && jump == e.FallbackStepToModel:
			st.Kind, st.Text = "decision", fmt.Sprintf("decision record: %s failed (%s); the live switch jumps to %s, no fallback", e.FallbackStepFromModel, e.Reason, jump)
		case e.FallbackStepFinalOutcome == policy.StepSwitched:
			st.Kind, st.Text = "decision", fmt.Sprintf("decision record: %s failed (%s); no next candidate: the live switch hands the turn back", e.FallbackStepFromModel, e.Reason)
		default:
			to := firstNonEmpty(e.FallbackStepToModel, "end of chain")
			st.Kind, st.Text = "fallback", fmt.Sprintf("↪ fallback %s → %s (%s)", e.FallbackStepFromModel, to, e.Reason)
		}
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
	case policy.DecisionLiveSwitch:
		st.Kind = "live_switch"
		switch {
		case e.FallbackStepToModel != "":
			st.Text = fmt.Sprintf("↪ live switch %s → %s (the user's selection, a later candidate; reason %s)", e.FallbackStepFromModel, e.FallbackStepToModel, e.Reason)
		case e.FallbackStepFinalOutcome == policy.StepSwitched:
			st.Text = fmt.Sprintf("live switch taken on %s: the selection is outside the chain, the live switch hands the turn back (switched)", e.FallbackStepFromModel)
		default:
			st.Text = fmt.Sprintf("live switch taken on %s: the selection is the current or an earlier candidate, the run continues", e.FallbackStepFromModel)
		}
		st.Details = append(st.Details, e.ErrorPreview)
	}
}

// notice records a notice and says whether the user saw it.
func (x *Explanation) notice(st *Step, e events.NoticeSent) {
	x.Notices = append(x.Notices, NoticeRecord{Kind: e.Kind, Text: e.Text, Delivered: e.Delivered})
	st.Kind = "notice"
	if e.Delivered {
		st.Text = "user sees: " + e.Text
	} else {
		st.Text = fmt.Sprintf("notice recorded, not shown in a %s chat: %s", x.Chat, e.Text)
	}
}

// exhausted records a turn that ran out of candidates (at now).
func (x *Explanation) exhausted(st *Step, e events.TurnExhausted, now int64, at func(int64) string) {
	x.Outcome, x.Attempts, x.DurationMs = "exhausted", len(e.Attempts), e.DurationMs
	x.End = fmt.Sprintf("exhausted (%s): %s", msDur(e.DurationMs), redact.String(e.Summary))
	if len(e.Attempts) == 1 {
		x.End = singleAttemptEnd(e, x.failures > 0)
		shown := "not shown with a single attempt"
		if x.failures == 0 {
			shown = "not shown when the only candidate was skipped"
		}
		st.Details = append(st.Details, "recorded summary ("+shown+"): "+oneLine(e.Summary, 200))
	}
	st.Kind, st.Text = "end", x.End
	if e.SoonestCooldownExpiry > 0 {
		st.Details = append(st.Details, fmt.Sprintf("soonest cooldown expiry %s, %s after the turn ended",
			at(e.SoonestCooldownExpiry), msDur(e.SoonestCooldownExpiry-now)))
	}
}

// stopWhy says why a failover-disposition stop ended the turn with the
// provider's error instead of trying another candidate.
func stopWhy(e events.TurnStopped) string {
	if e.Disposition != policy.DispositionFailover {
		return ""
	}
	switch e.Reason {
	case policy.ReasonFormat:
		return "a format (invalid-request) error is terminal: the same payload would fail the same way on any candidate, so the provider's error is shown as it is (seeds 000 and 003; failover.formatAdvances: true advances instead, as OpenClaw 2026.9.6 does)"
	case policy.ReasonUnclassified, policy.ReasonUnknown:
		return "an error no classifier recognised, on the last candidate: it is shown as it is, not as an exhaustion summary (seed 000: a final unknown error does not continue)"
	}
	return ""
}
