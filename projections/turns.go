package projections

import (
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Turn outcomes (turns.outcome).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeExhausted = "exhausted"
	OutcomeStopped   = "stopped"
	// OutcomeSwitched: a live user switch outside the chain handed the
	// turn back (TurnSwitched, rule revision 3); disposition live_switch.
	OutcomeSwitched = "switched"
	// OutcomeUnfinished: TurnStarted with no terminal event yet.
	OutcomeUnfinished = "unfinished"
)

// DispositionLiveSwitch is turns.disposition of a switched turn.
const DispositionLiveSwitch = "live_switch"

// turns is the turns table: one row per (agent, turn id), the turn's
// folded [policy.TurnState] plus what its terminal event says. Every turn
// event goes through [policy.EvolveTurn] (RetryScheduled, NoticeSent, …
// change no column beyond what it keeps). TurnStarted opens a fresh row;
// a finished turn leaves the cache once written.
//
// It is a rowid table (schema version 6), not WITHOUT ROWID: its rows
// (≈ 450 B) are far above the twentieth of a page SQLite advises for
// WITHOUT ROWID, and a gateway's own random turn ids then put each insert
// in a random leaf of the wide-row tree. As a rowid table the rows are
// appended and only the narrow (agent, turnId) key index takes random
// inserts: the projector's CPU per event with random ids is 11–26% lower
// (BenchmarkProjector/random-turn-ids), with sequential ids the same.
var turns = register(&table{
	name: "turns", order: 40, key: 2, upsert: true,
	columns: []column{
		text("agent"), text("turnId"), text("sessionId"), text("chat"),
		text("requestedProvider"), text("requestedModel"), text("selectionSource"),
		integer("strict"), text("configHash"),
		text("answeredProvider"), text("answeredModel"), text("answeredProfileId"),
		integer("attempts"), text("outcome"), text("reason"), text("disposition"),
		millis("startedAt"), millis("endedAt"), integer("durationMs"), integer("lastSeq"),
		integer("startSeq"), millis("openedAt"), text("class"),
	},
	indexes: []index{
		{"turns_session", []string{"agent", "sessionId", "startedAt"}},
		{"turns_started", []string{"startedAt"}},
		{"turns_agent_opened", []string{"agent", "openedAt"}},
	},
	folds: []events.Payload{
		events.TurnStarted{}, events.AttemptStarted{}, events.AttemptFailed{}, events.AttemptSucceeded{},
		events.RetryScheduled{}, events.CandidateSkipped{}, events.FallbackStepped{},
		events.ChainRetryScheduled{}, events.NoticeSent{}, events.TurnSucceeded{}, events.TurnExhausted{},
		events.TurnStopped{}, events.LiveSwitchMarked{}, events.TurnSwitched{},
	},
	rows: keyed(func(k key) keyedRow { return &turnRow{key: k} }, opensTurn),
})

// opensTurn: a TurnStarted opens a fresh row (nothing to read back).
func opensTurn(p events.Payload) bool {
	_, ok := p.(events.TurnStarted)
	return ok
}

// turnRow is one turns row: the turn's folded [policy.TurnState] (phase,
// attempts, what TurnStarted said) plus what its terminal event says.
// Only the TurnState fields the row holds are restored when a turn is
// read back from the table; the decider-only fields (tried profiles,
// probe slots, summary…) never reach a column.
type turnRow struct {
	key
	st          policy.TurnState
	answered    events.ModelRef
	answeredBy  string // profile id
	reason      string
	disposition string
	endedAt     int64
	durationMs  int64
	lastSeq     int64
	// startSeq and openedAt are the sequence and envelope time of the
	// TurnStarted commit (the timeline's start_seq and started_at;
	// startedAt is the time TurnStarted records).
	startSeq, openedAt int64
	// strict and outcome are the columns as read back.
	strict       int64
	savedOutcome string
}

// outcome maps the folded phase to the turns.outcome column.
func (r *turnRow) outcome() string {
	switch r.st.Phase {
	case policy.PhaseSucceeded:
		return OutcomeSucceeded
	case policy.PhaseExhausted:
		return OutcomeExhausted
	case policy.PhaseStopped:
		return OutcomeStopped
	case policy.PhaseSwitched:
		return OutcomeSwitched
	}
	return OutcomeUnfinished
}

// done: a finished turn leaves the cache once written.
func (r *turnRow) done() bool { return r.outcome() != OutcomeUnfinished }

// reset makes r the new row of turn k (a row that left the cache is
// reused rather than allocated: a TurnState is over a kilobyte).
func (r *turnRow) reset(k key) { *r = turnRow{key: k} }

// fold applies one turn event with [policy.EvolveTurn] and records the
// terminal event's facts.
func (r *turnRow) fold(ev *events.Event) {
	p := ev.Data
	if _, ok := p.(events.TurnStarted); ok {
		*r = turnRow{key: r.key, startSeq: int64(ev.Seq), openedAt: ev.At.UnixMilli()}
	}
	r.st.Evolve(p) // policy.EvolveTurn in place
	r.lastSeq = int64(ev.Seq)
	switch e := p.(type) {
	case events.TurnSucceeded:
		if e.TurnID == r.st.TurnID {
			r.answered, r.answeredBy, r.reason, r.disposition = e.AnsweredBy, e.ProfileID, "", ""
			r.endedAt, r.durationMs = ev.At.UnixMilli(), e.DurationMs
		}
	case events.TurnExhausted:
		if e.TurnID == r.st.TurnID {
			r.reason, r.disposition, r.endedAt, r.durationMs = e.Reason, "", ev.At.UnixMilli(), e.DurationMs
		}
	case events.TurnStopped:
		if e.TurnID == r.st.TurnID {
			r.reason, r.disposition, r.endedAt, r.durationMs = e.Reason, e.Disposition, ev.At.UnixMilli(), e.DurationMs
		}
	case events.TurnSwitched:
		if e.TurnID == r.st.TurnID {
			r.reason, r.disposition, r.endedAt, r.durationMs = "", DispositionLiveSwitch, ev.At.UnixMilli(), e.DurationMs
		}
	}
}

func (r *turnRow) values(dst []any) []any {
	s := &r.st
	return append(dst, r.agent, r.id, s.Session, s.Chat, s.Requested.Provider, s.Requested.Model,
		s.SelectionSource, b2i(s.Strict), s.ConfigHash, r.answered.Provider, r.answered.Model,
		r.answeredBy, s.Attempts, r.outcome(), r.reason, r.disposition,
		s.StartedAt, r.endedAt, r.durationMs, r.lastSeq, r.startSeq, r.openedAt, r.class())
}

// class is the turn's outcome class for the timeline ([Classify]).
func (r *turnRow) class() string {
	return Classify(r.outcome(), r.st.Attempts, r.st.Requested.String(), r.answered.String())
}

func (r *turnRow) dest() []any {
	s := &r.st
	return []any{&s.Session, &s.Chat, &s.Requested.Provider, &s.Requested.Model,
		&s.SelectionSource, &r.strict, &s.ConfigHash, &r.answered.Provider, &r.answered.Model,
		&r.answeredBy, &s.Attempts, &r.savedOutcome, &r.reason, &r.disposition,
		&s.StartedAt, &r.endedAt, &r.durationMs, &r.lastSeq, &r.startSeq, &r.openedAt, new(string)}
}

func (r *turnRow) loaded(id string) error {
	s := &r.st
	s.Strict, s.Phase = r.strict != 0, phaseOf(r.savedOutcome)
	if s.Session != "" || s.StartedAt != 0 {
		s.TurnID = id // the row was opened by TurnStarted
	}
	return nil
}

// phaseOf is the phase a row read back resumes in.
func phaseOf(outcome string) policy.TurnPhase {
	switch outcome {
	case OutcomeSucceeded:
		return policy.PhaseSucceeded
	case OutcomeExhausted:
		return policy.PhaseExhausted
	case OutcomeStopped:
		return policy.PhaseStopped
	case OutcomeSwitched:
		return policy.PhaseSwitched
	}
	return policy.PhaseRunning
}
