package replay_test

import (
	"context"
	"iter"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// eventList is a hand-made stream: one commit per event, sequence = index
// + 1.
type eventList []events.Event

func (l eventList) Read(_ context.Context, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for i, ev := range l {
			ev.Seq = uint64(i + 1)
			if ev.Seq >= from && !yield(ev, nil) {
				return
			}
		}
	}
}

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// ms is t0 + ms milliseconds, as Unix ms.
func ms(off int64) int64 { return t0.UnixMilli() + off }

func ev(agent string, off int64, p events.Payload) events.Event {
	key := ""
	switch e := p.(type) {
	case events.ProfileFailureRecorded:
		key = e.ProfileID
	case events.ProfileSucceeded:
		key = e.ProfileID
	case events.ProfileCleared:
		key = e.ProfileID
	case events.TurnStarted:
		key = e.TurnID
	}
	return events.Event{Envelope: events.Envelope{Type: p.EventType(), At: t0.Add(time.Duration(off) * time.Millisecond),
		Agent: agent, Aggregate: p.EventAggregate(), Key: key}, Data: p}
}

func turnEv(agent, turn string, off int64, p events.Payload) events.Event {
	e := ev(agent, off, p)
	e.Key, e.CorrelationID = turn, turn
	return e
}

// The windows of a hand-made profile history: a cooldown cleared early by
// a success (ended_at and cleared_seq of that success), a billing disable
// cleared by an operator (ProfileCleared), a model-scoped cooldown that
// ran out, a provider block still active at the last event (no ended_at),
// a window before the range left out, and another agent's events ignored.
func TestReadRange_ProfileWindows(t *testing.T) {
	const a, w = "main", "anthropic:work"
	stream := windowStream()
	tl, err := replay.ReadRange(testutil.Context(t), stream, replay.RangeOptions{Agent: a, Since: t0, Until: t0.Add(time.Hour)})
	testutil.NoError(t, err)
	want := []replay.ProfileWindow{
		{State: "cooldown", Reason: "rate_limit", Model: "claude-opus-4-6", From: "2026-03-02T09:00:01.000Z", Until: "2026-03-02T09:01:01.000Z",
			EndedAt: "2026-03-02T09:00:20.000Z", SetSeq: 2, ClearedSeq: 5},
		{State: "disabled", Reason: "billing", From: "2026-03-02T09:00:30.000Z", Until: "2026-03-02T09:10:30.000Z",
			EndedAt: "2026-03-02T09:00:40.000Z", SetSeq: 6, ClearedSeq: 7},
		{State: "cooldown", Reason: "rate_limit", Model: "claude-opus-4-6", From: "2026-03-02T09:00:50.000Z", Until: "2026-03-02T09:01:20.000Z",
			EndedAt: "2026-03-02T09:01:20.000Z", SetSeq: 8},
		{State: "blocked", Reason: "subscription_limit", Source: "reset_header", From: "2026-03-02T09:01:40.000Z", Until: "2026-03-02T10:00:00.000Z", SetSeq: 9},
	}
	if len(tl.Profiles) != 1 || tl.Profiles[0].ProfileID != w || tl.Profiles[0].Provider != "anthropic" {
		t.Fatalf("profiles %+v, want one lane of %s", tl.Profiles, w)
	}
	got := tl.Profiles[0].Windows
	for i := range got {
		got[i] = stripped(got[i])
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("windows\n got %+v\nwant %+v", got, want)
	}
	if tl.LastSeq != 9 || tl.LedgerFirst != "2026-03-02T07:00:00.000Z" || tl.LedgerLast != "2026-03-02T09:01:40.000Z" {
		t.Fatalf("last_seq %d, ledger %s..%s", tl.LastSeq, tl.LedgerFirst, tl.LedgerLast)
	}
}

// windowStream is the hand-made profile history of
// TestReadRange_ProfileWindows.
func windowStream() eventList {
	const a, w = "main", "anthropic:work"
	fail := func(off int64, f events.ProfileFailureRecorded) events.Event {
		f.ProfileID, f.Provider, f.LastFailureAt = w, "anthropic", ms(off)
		return ev(a, off, f)
	}
	return eventList{
		fail(-7200_000, events.ProfileFailureRecorded{Reason: "rate_limit", CooldownUntil: ms(-7170_000), CooldownReason: "rate_limit"}), // 1: before the range
		fail(1000, events.ProfileFailureRecorded{Reason: "rate_limit", CooldownUntil: ms(61_000), CooldownReason: "rate_limit", CooldownModel: "claude-opus-4-6"}),
		ev("other", 2000, events.ProfileCleared{ProfileID: w}), // 3: another agent
		fail(3000, events.ProfileFailureRecorded{Reason: "rate_limit", WindowKept: true, CooldownUntil: ms(61_000), CooldownReason: "rate_limit", CooldownModel: "claude-opus-4-6"}),
		ev(a, 20_000, events.ProfileSucceeded{ProfileID: w, Provider: "anthropic", Model: "claude-opus-4-6", LastUsed: ms(20_000)}), // 5: clears it early
		fail(30_000, events.ProfileFailureRecorded{Reason: "billing", DisabledUntil: ms(630_000), DisabledReason: "billing"}),
		ev(a, 40_000, events.ProfileCleared{ProfileID: w, By: "cli"}), // 7: operator clear
		fail(50_000, events.ProfileFailureRecorded{Reason: "rate_limit", CooldownUntil: ms(80_000), CooldownReason: "rate_limit", CooldownModel: "claude-opus-4-6"}),
		fail(100_000, events.ProfileFailureRecorded{Reason: "rate_limit", CooldownUntil: ms(80_000), CooldownReason: "rate_limit", CooldownModel: "claude-opus-4-6",
			BlockedUntil: ms(3600_000), BlockedReason: "subscription_limit", BlockedSource: "reset_header"}), // 9: the old cooldown ran out; a block
	}
}

// stripped is w as it reads back from JSON (the unexported times gone).
func stripped(w replay.ProfileWindow) replay.ProfileWindow {
	return replay.ProfileWindow{State: w.State, Reason: w.Reason, Model: w.Model, Source: w.Source, From: w.From, Until: w.Until,
		EndedAt: w.EndedAt, SetSeq: w.SetSeq, ClearedSeq: w.ClearedSeq}
}

// turnStream is the hand-made turns of TestReadRange_Turns: one of each
// outcome class, one two hours before the others.
func turnStream() eventList {
	const a = "main"
	opus := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	turn := func(id string, off int64, end events.Payload, attempts int) []events.Event {
		out := []events.Event{ev(a, off, events.TurnStarted{TurnID: id, Session: "s", Requested: opus})}
		for i := range attempts {
			out = append(out, turnEv(a, id, off+int64(i)+1, events.AttemptStarted{TurnID: id, Attempt: i + 1}))
		}
		if end != nil {
			out = append(out, turnEv(a, id, off+100, end))
		}
		return out
	}
	var stream eventList
	for _, evs := range [][]events.Event{
		turn("early", -2*3600_000, events.TurnSucceeded{TurnID: "early", AnsweredBy: opus, Attempts: 1}, 1),
		turn("first", 0, events.TurnSucceeded{TurnID: "first", AnsweredBy: opus, ProfileID: "anthropic:work", Attempts: 1}, 1),
		turn("rotated", 1000, events.TurnSucceeded{TurnID: "rotated", AnsweredBy: opus, ProfileID: "anthropic:personal", Attempts: 2}, 2),
		turn("fell", 2000, events.TurnSucceeded{TurnID: "fell", AnsweredBy: gpt, ProfileID: "openai:default", Attempts: 3}, 3),
		turn("exhausted", 3000, events.TurnExhausted{TurnID: "exhausted", Reason: "rate_limit"}, 2),
		turn("stopped", 4000, events.TurnStopped{TurnID: "stopped", Reason: "format", Disposition: "failover"}, 1),
		turn("switched", 5000, events.TurnSwitched{TurnID: "switched", Session: "s", Model: gpt}, 1),
		turn("running", 6000, nil, 1),
	} {
		stream = append(stream, evs...)
	}
	return stream
}

// Turns: each outcome class, the range by start time, the default range
// (the last hour of the ledger, not of the wall clock) and the limit.
func TestReadRange_Turns(t *testing.T) {
	const a = "main"
	stream := turnStream()
	ctx := testutil.Context(t)
	tl, err := replay.ReadRange(ctx, stream, replay.RangeOptions{Agent: a})
	testutil.NoError(t, err)
	if tl.Since != "2026-03-02T08:00:06.001Z" || tl.Until != "2026-03-02T09:00:06.001Z" {
		t.Fatalf("default range %s..%s, want the last hour of the ledger", tl.Since, tl.Until)
	}
	type row struct{ id, outcome, final string }
	var got []row
	for _, m := range tl.Turns {
		got = append(got, row{m.TurnID, m.Outcome, m.FinalModel})
	}
	want := []row{{"first", "first_try", "anthropic/claude-opus-4-6"}, {"rotated", "rotated", "anthropic/claude-opus-4-6"},
		{"fell", "fell_back", "openai/gpt-5"}, {"exhausted", "exhausted", ""}, {"stopped", "stopped", ""},
		{"switched", "switched", ""}, {"running", "running", ""}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turns\n got %v\nwant %v", got, want)
	}
	fell := tl.Turns[2]
	if fell.Attempts != 3 || fell.StartSeq != 11 || fell.EndSeq != 15 || fell.StartedAt != "2026-03-02T09:00:02.000Z" ||
		fell.EndedAt != "2026-03-02T09:00:02.100Z" || fell.FinalProfile != "openai:default" || fell.RequestedModel != "anthropic/claude-opus-4-6" {
		t.Fatalf("fell_back turn %+v", fell)
	}
	if r := tl.Turns[6]; r.EndedAt != "" || r.StartSeq != 26 || r.EndSeq != 27 {
		t.Fatalf("running turn %+v: want no ended_at, end_seq of its last event", r)
	}
	if tl.Turns[3].Reason != "rate_limit" {
		t.Fatalf("exhausted reason %q", tl.Turns[3].Reason)
	}
	tl, err = replay.ReadRange(ctx, stream, replay.RangeOptions{Agent: a, Since: t0.Add(time.Second), Until: t0.Add(3 * time.Second), Limit: 2})
	testutil.NoError(t, err)
	if len(tl.Turns) != 2 || tl.Turns[0].TurnID != "rotated" || tl.Turns[1].TurnID != "fell" || !tl.Truncated {
		t.Fatalf("range 1s..3s limit 2: %+v truncated %v", tl.Turns, tl.Truncated)
	}
	tl, err = replay.ReadRange(ctx, stream, replay.RangeOptions{Agent: "nobody"})
	testutil.NoError(t, err)
	if tl.Since != "" || tl.Until != "" || len(tl.Turns) != 0 || len(tl.Profiles) != 0 {
		t.Fatalf("agent without events: %+v", tl)
	}
}
