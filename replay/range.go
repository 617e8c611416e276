package replay

import (
	"context"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// The timeline's types, window derivation and outcome classes are the
// projections' (the profile_windows and turns tables fold them
// incrementally; GET /v1/timeline reads them there, projections.DB.Timeline).
// ReadRange derives the same answer from the whole stream: the reference
// the projection's answer is tested against.

// Classify is [projections.Classify].
func Classify(end string, attempts int, requested, answered string) string {
	return projections.Classify(end, attempts, requested, answered)
}

// Default and largest number of turns a [RangeTimeline] holds.
const (
	DefaultRangeTurns = projections.DefaultRangeTurns
	MaxRangeTurns     = projections.MaxRangeTurns
)

// RangeOptions select what [ReadRange] reads.
type RangeOptions = projections.TimelineOptions

// The timeline's answer: [projections.RangeTimeline] and its parts.
type (
	RangeTimeline = projections.RangeTimeline
	ProfileLane   = projections.ProfileLane
	ProfileWindow = projections.ProfileWindow
	TurnMark      = projections.TurnMark
)

// FormatTime is t as the timeline writes times: RFC 3339, UTC,
// milliseconds always.
func FormatTime(t time.Time) string { return projections.FormatTime(t) }

func formatMs(ms int64) string { return projections.FormatMs(ms) }

// profileTrack follows one profile's windows, keeping the ended ones.
type profileTrack struct {
	*projections.ProfileTrack
	done []*ProfileWindow
}

// turnTrack follows one turn.
type turnTrack struct {
	mark      TurnMark
	requested string
	end       string
	started   int64 // Unix ms
}

// ReadRange reads the stream from its start to its end and returns
// opt.Agent's profile windows overlapping the range and the turns started
// in it (at most opt.Limit, in start order). It writes nothing.
func ReadRange(ctx context.Context, src Source, opt RangeOptions) (*RangeTimeline, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultRangeTurns
	}
	hasSince, hasUntil := !opt.Since.IsZero(), !opt.Until.IsZero()
	since, until := opt.Since.UnixMilli(), opt.Until.UnixMilli()
	// Without since the range's start is known only at the end: every
	// turn of the last hour read so far is kept until then.
	defaulted := !hasSince
	profiles := map[string]*profileTrack{}
	var turns []*turnTrack
	byID := map[string]*turnTrack{}
	var first, last, lastAny int64
	var lastSeq uint64
	dropped, trimAt := false, 2*limit+4096
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		lastSeq = c.Seq
		for i := range c.Events {
			ev := &c.Events[i]
			at := ev.At.UnixMilli()
			lastAny = max(lastAny, at)
			if ev.Agent != opt.Agent {
				continue
			}
			if first == 0 {
				first = at
			}
			last = max(last, at)
			if ev.Aggregate == events.AggProfile {
				p := profiles[ev.Key]
				if p == nil {
					p = &profileTrack{ProfileTrack: projections.NewProfileTrack(ev.Key)}
					profiles[ev.Key] = p
				}
				ended, _ := p.Fold(c.Seq, i, at, ev.Data)
				p.done = append(p.done, ended...)
				continue
			}
			if ts, ok := ev.Data.(events.TurnStarted); ok {
				if (hasSince && at < since) || (hasUntil && at > until) {
					continue
				}
				t := &turnTrack{requested: ts.Requested.String(), mark: TurnMark{TurnID: ts.TurnID, Session: ts.Session,
					RequestedModel: ts.Requested.String(), StartSeq: c.Seq, EndSeq: c.Seq}, started: at}
				if !defaulted && len(turns) >= limit {
					dropped = true
					continue
				}
				turns = append(turns, t)
				byID[ts.TurnID] = t
				if defaulted && len(turns) >= trimAt {
					turns, byID = trimTurns(turns, last-time.Hour.Milliseconds())
					trimAt = 2*len(turns) + 4096
				}
				continue
			}
			if ev.Aggregate != events.AggTurn {
				continue
			}
			if t := byID[ev.Key]; t != nil {
				t.fold(c.Seq, at, ev.Data)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &RangeTimeline{Agent: opt.Agent, LastSeq: lastSeq, Profiles: []ProfileLane{}, Turns: []TurnMark{}}
	if first > 0 {
		out.LedgerFirst, out.LedgerLast = formatMs(first), formatMs(last)
	}
	switch {
	case !hasUntil && first > 0:
		until = last
	case !hasUntil && hasSince:
		until = since // no event: an empty range
	case !hasUntil:
		// No event and no range asked: since and until stay absent.
		out.Profiles = lanes(profiles, 0, -1, lastAny)
		return out, nil
	}
	if !hasSince {
		since = projections.DefaultSince(until)
	}
	out.Since, out.Until = formatMs(since), formatMs(until)
	for _, t := range turns {
		if t.started < since || t.started > until {
			continue
		}
		if len(out.Turns) == limit {
			out.Truncated = true
			break
		}
		out.Turns = append(out.Turns, t.finish())
	}
	out.Truncated = out.Truncated || dropped
	out.Profiles = lanes(profiles, since, until, lastAny)
	return out, nil
}

// trimTurns drops the turns started before from (a defaulted range keeps
// only the last hour of the ledger).
func trimTurns(turns []*turnTrack, from int64) ([]*turnTrack, map[string]*turnTrack) {
	kept := turns[:0]
	byID := map[string]*turnTrack{}
	for _, t := range turns {
		if t.started >= from {
			kept = append(kept, t)
			byID[t.mark.TurnID] = t
		}
	}
	return kept, byID
}

// fold applies one of the turn's events.
func (t *turnTrack) fold(seq uint64, at int64, data events.Payload) {
	t.mark.EndSeq = seq
	ended := func(end string) {
		t.end = end
		t.mark.EndedAt = formatMs(at)
	}
	switch e := data.(type) {
	case events.AttemptStarted:
		t.mark.Attempts++
	case events.TurnSucceeded:
		ended(projections.OutcomeSucceeded)
		t.mark.FinalModel, t.mark.FinalProfile = e.AnsweredBy.String(), e.ProfileID
	case events.TurnExhausted:
		ended(projections.OutcomeExhausted)
		t.mark.Reason = e.Reason
	case events.TurnStopped:
		ended(projections.OutcomeStopped)
		t.mark.Reason = e.Reason
	case events.TurnSwitched:
		ended(projections.OutcomeSwitched)
	}
}

func (t *turnTrack) finish() TurnMark {
	m := t.mark
	m.StartedAt = formatMs(t.started)
	m.Outcome = Classify(t.end, m.Attempts, t.requested, m.FinalModel)
	return m
}

// lanes are the profiles' windows overlapping [since, until], sorted by
// provider then id; a window still open at lastAt has no EndedAt.
func lanes(profiles map[string]*profileTrack, since, until, lastAt int64) []ProfileLane {
	out := make([]ProfileLane, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, projections.Lane(p.ID, p.Provider, append(p.done, p.Open()...), since, until, lastAt))
	}
	projections.SortLanes(out)
	return out
}
