package events_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// t0 is the decision time used by the tests.
var t0 = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

func require_NoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func require_ErrorIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// openStore opens a store on an embedded server in a fresh temp dir and
// closes it when the test ends.
func openStore(t testing.TB, opts ...events.Option) (events.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := events.Open(context.Background(), append([]events.Option{events.WithDataDir(dir)}, opts...)...)
	require_NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

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
