package events_test

import (
	"time"

	"github.com/fledger/fledger/events"
)

// t0 is the decision time used by the tests.
var t0 = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// failure returns a decision of two events: the attempt failure on the turn
// and the profile failure it caused.
func failure(turn string, attempt int) []events.Event {
	af := events.AttemptFailed{TurnID: turn, Attempt: attempt, Provider: "openai", Model: "gpt-5",
		ProfileID: "openai:user@example.com", Reason: "rate_limit", Status: 429, Disposition: "failover",
		Evidence: events.Evidence{Rule: "status-429"}}
	a := events.New("main", turn, t0, af, events.WithCorrelation(turn))
	pf := events.ProfileFailureRecorded{ProfileID: "openai:user@example.com", Provider: "openai", Model: "gpt-5",
		Reason: "rate_limit", TurnID: turn, Attempt: attempt, ErrorCount: attempt,
		FailureCounts: map[string]int{"rate_limit": attempt}, LastFailureAt: events.Millis(t0)}
	p := events.New("main", "openai:user@example.com", t0, pf, events.WithCausation(a.ID), events.WithCorrelation(turn))
	return []events.Event{a, p}
}

var profileSubj = events.MustSubject("main", events.AggProfile, "openai:user@example.com")
