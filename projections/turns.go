package projections

import (
	"context"
	"database/sql"
	"errors"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Turn outcomes (turns.outcome).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeExhausted = "exhausted"
	OutcomeStopped   = "stopped"
	// OutcomeUnfinished: TurnStarted with no terminal event yet.
	OutcomeUnfinished = "unfinished"
)

// turnColumns are the turns table's columns in table order; the first two
// are the key.
var turnColumns = []string{
	"agent", "turnId", "sessionId", "chat", "requestedProvider", "requestedModel",
	"selectionSource", "strict", "configHash", "answeredProvider", "answeredModel",
	"answeredProfileId", "attempts", "outcome", "reason", "disposition",
	"startedAt", "endedAt", "durationMs", "lastSeq",
}

// turnRow is one turns row: the turn's folded [policy.TurnState] (phase,
// attempts, what TurnStarted said) plus what its terminal event says.
// Only the TurnState fields the row holds are restored when a turn is
// reloaded from the table; the decider-only fields (tried profiles, probe
// slots, summary…) never reach a column.
type turnRow struct {
	key
	st          policy.TurnState
	answered    events.ModelRef
	answeredBy  string // profile id
	reason      string
	disposition string
	endedAt     int64
	durationMs  int64
	lastSeq     uint64
	dirty       bool
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
	}
	return OutcomeUnfinished
}

func (r *turnRow) finished() bool { return r.outcome() != OutcomeUnfinished }

// fold applies one turn event with [policy.EvolveTurn] and records the
// terminal event's facts.
func (r *turnRow) fold(p events.Payload, at int64, seq uint64) {
	if _, ok := p.(events.TurnStarted); ok {
		*r = turnRow{key: r.key}
	}
	r.st = policy.EvolveTurn(r.st, p)
	r.lastSeq, r.dirty = seq, true
	switch e := p.(type) {
	case events.TurnSucceeded:
		if e.TurnID == r.st.TurnID {
			r.answered, r.answeredBy, r.reason, r.disposition = e.AnsweredBy, e.ProfileID, "", ""
			r.endedAt, r.durationMs = at, e.DurationMs
		}
	case events.TurnExhausted:
		if e.TurnID == r.st.TurnID {
			r.reason, r.disposition, r.endedAt, r.durationMs = e.Reason, "", at, e.DurationMs
		}
	case events.TurnStopped:
		if e.TurnID == r.st.TurnID {
			r.reason, r.disposition, r.endedAt, r.durationMs = e.Reason, e.Disposition, at, e.DurationMs
		}
	}
}

func (r *turnRow) args() []any {
	s := &r.st
	return []any{r.agent, r.id, s.Session, s.Chat, s.Requested.Provider, s.Requested.Model,
		s.SelectionSource, b2i(s.Strict), s.ConfigHash, r.answered.Provider, r.answered.Model,
		r.answeredBy, s.Attempts, r.outcome(), r.reason, r.disposition,
		s.StartedAt, r.endedAt, r.durationMs, int64(r.lastSeq)}
}

// phaseOf is the phase a reloaded row resumes in.
func phaseOf(outcome string) policy.TurnPhase {
	switch outcome {
	case OutcomeSucceeded:
		return policy.PhaseSucceeded
	case OutcomeExhausted:
		return policy.PhaseExhausted
	case OutcomeStopped:
		return policy.PhaseStopped
	}
	return policy.PhaseRunning
}

// turn returns the cached row for k; TurnStarted opens a fresh one, other
// events load it from the table on a miss.
func (p *Projector) turn(ctx context.Context, c *cache, k key, first events.Payload) (*turnRow, error) {
	if r := c.turns[k]; r != nil {
		return r, nil
	}
	r := &turnRow{key: k}
	c.turns[k] = r
	if _, ok := first.(events.TurnStarted); ok {
		return r, nil
	}
	s := &r.st
	var strict, seq int64
	var outcome string
	err := p.stmts.loadTurn.QueryRowContext(ctx, k.agent, k.id).Scan(&s.Session, &s.Chat, &s.Requested.Provider,
		&s.Requested.Model, &s.SelectionSource, &strict, &s.ConfigHash, &r.answered.Provider, &r.answered.Model,
		&r.answeredBy, &s.Attempts, &outcome, &r.reason, &r.disposition, &s.StartedAt, &r.endedAt, &r.durationMs, &seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		delete(c.turns, k)
		return nil, p.db.wrap(err)
	default:
		s.Strict, s.Phase, r.lastSeq = strict != 0, phaseOf(outcome), uint64(seq)
		if s.Session != "" || s.StartedAt != 0 {
			s.TurnID = k.id // the row was opened by TurnStarted
		}
	}
	return r, nil
}
