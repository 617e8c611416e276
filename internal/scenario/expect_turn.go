package scenario

import (
	"strconv"
	"time"

	"github.com/fledger/fledger/events"
)

// missFunc records one mismatch: where, the field, want and got.
type missFunc func(where, field, want, got string)

// checkTurn compares one turn's report with its expectations.
func checkTurn(sc *Scenario, where string, ex *TurnExpect, tr *TurnReport, miss missFunc) {
	str := func(field, want, got string) {
		if want != "" && absent(want) != got {
			miss(where, field, quote(absent(want)), quote(got))
		}
	}
	str("outcome", ex.Outcome, tr.Outcome)
	str("answered_by", ex.AnsweredBy, tr.AnsweredBy)
	str("profile", ex.Profile, tr.Profile)
	str("summary", ex.Summary, tr.Summary)
	str("disposition", ex.Disposition, tr.Disposition)
	str("reason", ex.Reason, tr.Reason)
	str("message", ex.Message, tr.Message)
	str("switched_to", ex.SwitchedTo, tr.SwitchedTo)
	if ex.Attempts != nil && *ex.Attempts != tr.Attempts {
		miss(where, "attempts", strconv.Itoa(*ex.Attempts), strconv.Itoa(tr.Attempts))
	}
	var shown, hidden []string
	for _, n := range tr.Notices {
		if n.Delivered {
			shown = append(shown, n.Text)
		} else {
			hidden = append(hidden, n.Text)
		}
	}
	lists := []struct {
		field string
		want  *[]string
		got   []string
	}{{"notices", ex.Notices, shown}, {"suppressed notices", ex.Suppressed, hidden},
		{"chain", ex.Chain, tr.Chain}, {"tried_candidates", ex.TriedCandidates, tried(tr, func(a AttemptReport) string { return a.Candidate })},
		{"tried_profiles", ex.TriedProfiles, tried(tr, func(a AttemptReport) string { return orNone(a.Profile) })},
		{"attempt_kinds", ex.AttemptKinds, tried(tr, func(a AttemptReport) string { return a.Kind })},
		{"skips", ex.Skips, tr.Skips}}
	for _, l := range lists {
		if l.want != nil && !equal(*l.want, l.got) {
			miss(where, l.field, list(*l.want), list(l.got))
		}
	}
	checkTime(sc, where, "soonest_cooldown_expiry", ex.SoonestCooldownExpiry, tr.SoonestCooldown, miss)
	checkTime(sc, where, "answered_at", ex.AnsweredAt, tr.AnsweredAt, miss)
	if ex.Session != nil {
		var got SessionReport
		if tr.SessionState != nil {
			got = *tr.SessionState
		}
		checkSession(where, "session", *ex.Session, got, miss)
	}
	checkProfiles(sc, where+" after the turn", ex.Profiles, tr.Profiles, miss)
}

// tried maps every attempt of the turn with f, in order.
func tried(tr *TurnReport, f func(AttemptReport) string) []string {
	out := make([]string, len(tr.Tried))
	for i, a := range tr.Tried {
		out[i] = f(a)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// checkTime compares an expected time (+<duration>, RFC 3339 or none)
// with got (nil = none).
func checkTime(sc *Scenario, where, field string, want *string, got *time.Time, miss missFunc) {
	if want == nil {
		return
	}
	w, _ := parseExpectTime(*want, sc.Start)
	var g int64
	if got != nil {
		g = events.Millis(*got)
	}
	if w != g {
		miss(where, field, timeText(w, sc.Start), timeText(g, sc.Start))
	}
}
