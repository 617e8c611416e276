package policy

import (
	"fmt"
	"strings"

	"github.com/fledger/fledger/events"
)

// NoticeKind is what a user-visible notice says ([Notice.Kind], stored as
// NoticeSent.Kind).
type NoticeKind string

// Notice kinds.
const (
	NoticeFallback        NoticeKind = "fallback"
	NoticeFallbackCleared NoticeKind = "fallback_cleared"
	NoticeOverloadWait    NoticeKind = "overload_wait"
)

// OverloadNoticeText is the one transient notice of a whole-chain overload
// retry, sent once ChainOverloadNoticeAfterMs was waited (seed 003; POLICY
// "Retries, probes, limits").
const OverloadNoticeText = "The AI service is temporarily overloaded. I'm still retrying; this may take a few minutes."

// FallbackNoticeText is `↪️ Model Fallback: <active> (selected <selected>;
// <reason>)` (seed 000 "User-visible fallback notices"; POLICY "What the
// user sees").
func FallbackNoticeText(active, selected, reason string) string {
	return fmt.Sprintf("↪️ Model Fallback: %s (selected %s; %s)", active, selected, reason)
}

// FallbackClearedNoticeText is `↪️ Model Fallback cleared: <selected> (was
// <previous>)`; the "(was …)" part only when previous is known and differs
// (reference §10).
func FallbackClearedNoticeText(selected, previous string) string {
	if previous == "" || previous == selected {
		return "↪️ Model Fallback cleared: " + selected
	}
	return fmt.Sprintf("↪️ Model Fallback cleared: %s (was %s)", selected, previous)
}

// ReasonSummary is the notice's reason (reference §10 reasonSummary): the
// first attempt's reason with underscores as spaces, else its code, else
// `HTTP <status>`, then ` (+N more attempts)` when there were N more.
func ReasonSummary(attempts []events.ExhaustedAttempt) string {
	if len(attempts) == 0 {
		return ""
	}
	a := attempts[0]
	var s string
	switch {
	case a.Reason != "":
		s = humanReason(a.Reason)
	case a.Code != "":
		s = a.Code
	case a.Status != 0:
		s = fmt.Sprintf("HTTP %d", a.Status)
	default:
		s = humanReason(ReasonUnknown)
	}
	if n := len(attempts) - 1; n > 0 {
		s += fmt.Sprintf(" (+%d more attempts)", n)
	}
	return s
}

// ExhaustionSummary is `All models failed (N): p/m: err (reason) | …`
// (reference §7 "Failure summary"); a missing reason reads unknown. Each
// err is as recorded, line breaks included: the summary of rule revision
// 1 ([OneLineExhaustionSummary] is revision 2's).
func ExhaustionSummary(attempts []events.ExhaustedAttempt) string {
	return exhaustionSummary(attempts, false)
}

// OneLineExhaustionSummary is [ExhaustionSummary] with each provider
// message on one line: every run of line breaks (\r, \n) is one space
// (rule revision 2), so the summary is one line whatever the providers
// wrote.
func OneLineExhaustionSummary(attempts []events.ExhaustedAttempt) string {
	return exhaustionSummary(attempts, true)
}

func exhaustionSummary(attempts []events.ExhaustedAttempt, oneLine bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "All models failed (%d): ", len(attempts))
	for i, a := range attempts {
		if i > 0 {
			b.WriteString(" | ")
		}
		r := a.Reason
		if r == "" {
			r = ReasonUnknown
		}
		msg := a.Error
		if oneLine {
			msg = collapseLineBreaks(msg)
		}
		fmt.Fprintf(&b, "%s/%s: %s (%s)", a.Provider, a.Model, msg, r)
	}
	return b.String()
}

// Skip texts (reference §7 step 4–5).

// CooldownSkipText is `Provider X is in cooldown`.
func CooldownSkipText(provider string) string { return "Provider " + provider + " is in cooldown" }

// ProbeUsedSkipText is `Provider X is in cooldown (probe already attempted
// this run)`.
func ProbeUsedSkipText(provider string) string {
	return "Provider " + provider + " is in cooldown (probe already attempted this run)"
}

// ProviderIssueSkipText is `Provider X has <reason> issue (skipping all
// models)`.
func ProviderIssueSkipText(provider, reason string) string {
	return "Provider " + provider + " has " + reason + " issue (skipping all models)"
}

// SkipCacheText is the auth skip-cache text `Skipping p/m: recent <reason>
// failure in this session (run `openclaw models auth login --provider p` to
// re-authenticate)`.
func SkipCacheText(m ModelRef, reason string) string {
	return fmt.Sprintf("Skipping %s: recent %s failure in this session (run `openclaw models auth login --provider %s` to re-authenticate)", m, reason, m.Provider)
}

// delivered reports whether a visible notice is delivered in chat: never
// in group or channel conversations (state and events are still
// recorded).
func delivered(chat string) bool { return chat != "group" && chat != "channel" }

// collapseLineBreaks replaces every run of \r and \n in s with one space.
func collapseLineBreaks(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	brk := false
	for _, r := range s {
		if r == '\r' || r == '\n' {
			if !brk {
				b.WriteByte(' ')
			}
			brk = true
			continue
		}
		brk = false
		b.WriteRune(r)
	}
	return b.String()
}
