package scenario

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
)

// turnReport turns a turn's events into words: each attempt and its
// result, retries, cooldowns and disables, skips, fallback steps, pins and
// notices, and the end.
func (rep *Report) turnReport(res *engine.TurnResult) *TurnReport {
	tr := &TurnReport{ID: res.TurnID, Outcome: res.Outcome, Attempts: res.Attempts, Notices: []NoticeReport{}, Tried: []AttemptReport{}}
	if res.Outcome == engine.OutcomeSucceeded {
		tr.AnsweredBy, tr.Profile = res.AnsweredBy.String(), res.ProfileID
	}
	add := func(ev events.Event, kind, format string, a ...any) {
		tr.Lines = append(tr.Lines, Line{Offset: rep.offset(events.Millis(ev.At)), Kind: kind, Text: fmt.Sprintf(format, a...)})
	}
	for k, ev := range res.Events {
		tr.types = append(tr.types, ev.Type)
		switch e := ev.Data.(type) {
		case events.TurnStarted:
			tr.Session, tr.Chat, tr.Requested, tr.Source = e.Session, e.Chat, e.Requested.String(), e.SelectionSource
			for _, c := range e.Chain {
				tr.Chain = append(tr.Chain, c.Provider+"/"+c.Model)
			}
			strict := ""
			if e.Strict {
				strict = ", strict"
			}
			add(ev, "start", "chain %s (source %s%s)", strings.Join(tr.Chain, " → "), e.SelectionSource, strict)
		case events.AttemptStarted:
			tr.Tried = append(tr.Tried, AttemptReport{Attempt: e.Attempt, Candidate: e.Provider + "/" + e.Model, Profile: e.ProfileID,
				Kind: e.Kind, Offset: rep.offset(events.Millis(ev.At))})
			add(ev, "attempt", "#%d %-10s %s/%s%s", e.Attempt, e.Kind, e.Provider, e.Model, at(e.ProfileID))
		case events.AttemptSucceeded:
			at := ev.At.UTC()
			tr.AnsweredAt = &at
			add(ev, "ok", "   ✓ answered (%d ms)", e.LatencyMs)
		case events.AttemptFailed:
			detail := e.Error.MessagePreview
			if detail == "" {
				detail = e.Error.BodyPreview
			}
			add(ev, "failed", "   ✗ %s%s (%d ms): %s", e.Reason, status(e.Status), e.LatencyMs, cut(redact.String(detail), 110))
		case events.RetryScheduled:
			ra := ""
			if e.RetryAfterMs > 0 {
				ra = fmt.Sprintf(", retry-after %d ms", e.RetryAfterMs)
			}
			add(ev, "retry", "   retry %d/%d on the same profile in %d ms%s", e.Retry, e.Budget, e.DelayMs, ra)
		case events.ProfileFailureRecorded:
			add(ev, "profile", "   profile %s: %s failure #%d, %s", e.ProfileID, e.Reason, e.ErrorCount, rep.failureEffects(e))
		case events.CandidateSkipped:
			tr.Skips = append(tr.Skips, e.Provider+"/"+e.Model+": "+e.Message)
			add(ev, "skip", "skip %s/%s: %s", e.Provider, e.Model, redact.String(e.Message))
		case events.FallbackStepped:
			switch e.Decision {
			case "candidate_failed":
				to := e.FallbackStepToModel
				switch {
				case to != "" && liveSwitchTo(res.Events[k+1:]) == to:
					add(ev, "fallback", "   candidate_failed recorded (%s): the live switch jumps to %s, no fallback", e.Reason, to)
				case e.FallbackStepFinalOutcome == "switched":
					add(ev, "fallback", "   candidate_failed recorded (%s): no next candidate, the live switch hands the turn back", e.Reason)
				default:
					if to == "" {
						to = "end of chain"
					}
					add(ev, "fallback", "↪ fallback %s → %s (%s)", e.FallbackStepFromModel, to, e.Reason)
				}
			case "probe_cooldown_candidate":
				add(ev, "probe", "probe %s/%s in cooldown (%s)", e.CandidateProvider, e.CandidateModel, e.Reason)
			case "live_switch":
				to := e.FallbackStepToModel
				switch {
				case e.FallbackStepFinalOutcome == "switched":
					to = "switched: the selection is outside the chain, the live switch hands the turn back"
				case to == "":
					to = "no jump: the run continues"
				}
				add(ev, "live_switch", "↪ live switch %s → %s", e.FallbackStepFromModel, to)
			}
		case events.ChainRetryScheduled:
			add(ev, "chain_retry", "every candidate overloaded: whole-chain retry round %d in %d ms", e.Round, e.DelayMs)
		case events.NoticeSent:
			tr.Notices = append(tr.Notices, NoticeReport{Kind: e.Kind, Text: e.Text, Delivered: e.Delivered})
			if e.Delivered {
				add(ev, "notice", "notice: %s", e.Text)
			} else {
				add(ev, "notice", "notice (recorded, not shown in %s chat): %s", tr.Chat, e.Text)
			}
		case events.SessionAuthPinned:
			add(ev, "session", "   session pin → %s (%s)", e.ProfileID, e.Source)
		case events.SessionAuthUnpinned:
			add(ev, "session", "   session pin %s cleared (%s)", e.ProfileID, e.Cause)
		case events.SessionModelCleared:
			add(ev, "session", "   session selection %s cleared (%s)", e.Previous, e.Cause)
		case events.TurnSucceeded:
			tr.DurationMs = e.DurationMs
		case events.TurnExhausted:
			tr.DurationMs = e.DurationMs
		case events.TurnStopped:
			tr.DurationMs = e.DurationMs
		case events.LiveSwitchMarked:
			add(ev, "live_switch", "   /model %s (user) while the turn runs: pending live switch", e.Model)
		case events.TurnSwitched:
			tr.DurationMs = e.DurationMs
			add(ev, "switched", "switched: run the same turn again on %s (outside the chain)", e.Model)
		}
	}
	return tr
}

// liveSwitchTo is the model the live_switch record first in evs jumps to
// ("" = evs does not start with one).
func liveSwitchTo(evs []events.Event) string {
	if len(evs) > 0 {
		if ls, ok := evs[0].Data.(events.FallbackStepped); ok && ls.Decision == "live_switch" {
			return ls.FallbackStepToModel
		}
	}
	return ""
}

// failureEffects says what a recorded failure did to the profile, as a
// comma-separated list: the cooldown, disable and block it set (with their
// ends as offsets, reasons and scopes), the provider's reset it read, a
// failure window kept open; "counted" when it did nothing but count.
func (rep *Report) failureEffects(e events.ProfileFailureRecorded) string {
	var what []string
	if e.CooldownUntil > 0 {
		scope := ""
		if e.CooldownModel != "" {
			scope = " for " + e.CooldownModel
		}
		what = append(what, fmt.Sprintf("cooldown until %s (%s%s)", rep.offset(e.CooldownUntil), e.CooldownReason, scope))
	}
	if e.DisabledUntil > 0 {
		what = append(what, fmt.Sprintf("disabled until %s (%s)", rep.offset(e.DisabledUntil), e.DisabledReason))
	}
	if e.BlockedUntil > 0 {
		scope := ""
		if e.BlockedModel != "" {
			scope = " for " + e.BlockedModel
		}
		what = append(what, fmt.Sprintf("blocked until %s (%s from %s%s)", rep.offset(e.BlockedUntil), e.BlockedReason, e.BlockedSource, scope))
	}
	if e.Reset != nil {
		bounded := ""
		if e.BlockBounded {
			bounded = ", bounded by subscriptionBlockMaxMs"
		}
		what = append(what, fmt.Sprintf("provider reset %s read from %s %q%s", rep.offset(e.Reset.At), e.Reset.Field, cut(redact.String(e.Reset.Match), 60), bounded))
	}
	if e.WindowKept {
		what = append(what, "window kept")
	}
	if len(what) == 0 {
		what = append(what, "counted")
	}
	return strings.Join(what, ", ")
}

func at(profile string) string {
	if profile == "" {
		return ""
	}
	return " @" + profile
}

func status(s int) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprintf(" %d", s)
}

func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
