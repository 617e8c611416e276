package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// home is the aggregate a decision is stored under when it touches no
// profile: the turn (turn decisions) or the session (session commands).
type home struct {
	agg events.Aggregate
	key string
}

// commit decides and appends one decision atomically. decide runs with
// the state's read lock held, so the state it sees and the guard sequence
// are one consistent snapshot; it must not block or keep references to
// the maps it is given.
//
// Subject and guard (docs/engine.md "Consistency"): a decision holding a
// ProfileFailureRecorded or ProfileSucceeded for profile P (at most one
// profile per decision) is stored under fledger.<agent>.profile.<P> with
// that subject's last sequence as the expectation, so two engines failing
// the same profile conflict and the loser re-decides on the winner's
// counts; any other decision is stored under its home subject (the turn or
// the session), guarded the same way. On a conflict commit waits until the
// state has folded the winning commit and decides again, at most
// e.opt.retries times. An empty decision appends nothing (seq 0).
func (e *Engine) commit(ctx context.Context, at time.Time, h home, corr string,
	decide func() (policy.Decision, error)) (policy.Decision, []events.Event, error) {
	var last error
	subject := ""
	start := time.Now()
	if e.observe != nil {
		defer func() { e.observe(time.Since(start)) }()
	}
	for try := 0; try <= e.opt.retries; try++ {
		e.st.mu.RLock()
		if e.st.failed != nil {
			err := e.st.failed
			e.st.mu.RUnlock()
			return policy.Decision{}, nil, err
		}
		dec, err := decide()
		if err != nil || len(dec.Events) == 0 {
			e.st.mu.RUnlock()
			return dec, nil, err
		}
		agg, key := h.agg, h.key
		prof, err := profileOf(dec.Events)
		if err != nil {
			e.st.mu.RUnlock()
			return dec, nil, err
		}
		if prof != "" {
			agg, key = events.AggProfile, prof
		}
		subject, err = events.Subject(e.agent, agg, key)
		if err != nil {
			e.st.mu.RUnlock()
			return dec, nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
		expected := e.st.subjectSeq[subject]
		e.st.mu.RUnlock()

		evs := make([]events.Event, len(dec.Events))
		for i, p := range dec.Events {
			opts := []events.EventOpt{}
			if corr != "" {
				opts = append(opts, events.WithCorrelation(corr))
			}
			if i > 0 {
				opts = append(opts, events.WithCausation(evs[0].ID))
			}
			evs[i] = events.New(e.agent, events.KeyOf(p), at, p, opts...)
		}
		if e.beforeAppend != nil {
			e.beforeAppend(subject)
		}
		res, err := e.store.Append(ctx, subject, expected, evs...)
		var ce *events.ConflictError
		if errors.As(err, &ce) {
			e.conflicts.Add(1)
			last = err
			target := ce.Actual
			if !ce.ActualKnown {
				if target, err = e.store.LastSeq(ctx, subject); err != nil {
					return dec, nil, err
				}
			}
			if err := e.st.waitApplied(ctx, target); err != nil {
				return dec, nil, err
			}
			continue
		}
		if err != nil {
			if isValidationError(err) {
				// Refused before anything was stored: the step can be
				// taken again once fixed; nothing is half-recorded.
				return dec, nil, fmt.Errorf("%w: %w", ErrInvalidDecision, err)
			}
			return dec, nil, err
		}
		e.commits.Add(1)
		e.observeAppend(start)
		if err := e.st.waitApplied(ctx, res.Seq); err != nil {
			return dec, nil, err
		}
		for i := range evs {
			evs[i].Seq, evs[i].Index = res.Seq, i
		}
		return dec, evs, nil
	}
	return policy.Decision{}, nil, &ConflictRetriesError{Subject: subject, Tries: e.opt.retries + 1, Last: last}
}

// profileOf returns the one profile a decision's health events touch ("" =
// none), or ErrMultiProfileDecision.
func profileOf(ps []events.Payload) (string, error) {
	id := ""
	for _, p := range ps {
		var pid string
		switch e := p.(type) {
		case events.ProfileFailureRecorded:
			pid = e.ProfileID
		case events.ProfileSucceeded:
			pid = e.ProfileID
		case events.ProfileCleared:
			pid = e.ProfileID
		default:
			continue
		}
		if id != "" && pid != id {
			return "", fmt.Errorf("%w: %s and %s", ErrMultiProfileDecision, id, pid)
		}
		id = pid
	}
	return id, nil
}
