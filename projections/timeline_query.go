package projections

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// TimelineOptions select what [DB.Timeline] reads.
type TimelineOptions struct {
	// Agent is the agent whose profiles and turns are read (required).
	Agent string
	// Since and Until bound the range, both inclusive. A zero Until is the
	// time of the agent's last event (the ledger's end); a zero Since is
	// Until − 1 h: the default range is the last hour of the ledger.
	Since, Until time.Time
	// Limit is the most turns held (0 = DefaultRangeTurns).
	Limit int
}

// Timeline is opt.Agent's profile windows overlapping the range and the
// turns started in it (at most opt.Limit, in start order) as of the
// checkpoint: the answer replay.ReadRange derives from the whole stream,
// read from profile_windows, turns, usage_stats and agent_spans through
// their indexes, so its cost follows the range, not the ledger's age.
// LastSeq is the checkpoint; the caller catches up first. The reads
// share one read transaction: a catch-up committing meanwhile is not
// half seen.
func (db *DB) Timeline(ctx context.Context, opt TimelineOptions) (*RangeTimeline, error) {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	return db.timeline(ctx, tx, opt)
}

func (db *DB) timeline(ctx context.Context, tx querier, opt TimelineOptions) (*RangeTimeline, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultRangeTurns
	}
	var cp int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoint WHERE id = 1`).Scan(&cp); err != nil {
		return nil, db.wrap(err)
	}
	var first, last, lastAny int64
	err := tx.QueryRowContext(ctx, `SELECT firstAt, lastAt FROM agent_spans WHERE agent = ?`, opt.Agent).Scan(&first, &last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, db.wrap(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(lastAt), 0) FROM agent_spans`).Scan(&lastAny); err != nil {
		return nil, db.wrap(err)
	}
	out := &RangeTimeline{Agent: opt.Agent, LastSeq: uint64(cp), Profiles: []ProfileLane{}, Turns: []TurnMark{}}
	if first == 0 && opt.Until.IsZero() && opt.Since.IsZero() {
		return out, nil // no event and no range asked: since and until stay absent
	}
	if first > 0 {
		out.LedgerFirst, out.LedgerLast = FormatMs(first), FormatMs(last)
	}
	since, until := opt.Since.UnixMilli(), opt.Until.UnixMilli()
	switch {
	case opt.Until.IsZero() && first > 0:
		until = last
	case opt.Until.IsZero():
		until = since // no event: an empty range
	}
	if opt.Since.IsZero() {
		since = DefaultSince(until)
	}
	out.Since, out.Until = FormatMs(since), FormatMs(until)
	if out.Turns, out.Truncated, err = db.turnMarks(ctx, tx, opt.Agent, since, until, limit); err != nil {
		return nil, err
	}
	if out.Profiles, err = db.lanes(ctx, tx, opt.Agent, since, until, lastAny); err != nil {
		return nil, err
	}
	return out, nil
}

// turnMarks are the agent's turns started in [since, until] in start
// order, at most limit (truncated: there were more).
func (db *DB) turnMarks(ctx context.Context, tx querier, agent string, since, until int64, limit int) ([]TurnMark, bool, error) {
	rs, err := tx.QueryContext(ctx, `SELECT turnId, sessionId, requestedProvider, requestedModel,
		answeredProvider, answeredModel, answeredProfileId, attempts, class, reason, openedAt, endedAt,
		startSeq, lastSeq FROM turns WHERE agent = ? AND openedAt >= ? AND openedAt <= ?
		ORDER BY startSeq, turnId LIMIT ?`, agent, since, until, limit+1)
	if err != nil {
		return nil, false, db.wrap(err)
	}
	defer rs.Close()
	out := []TurnMark{}
	for rs.Next() {
		var m TurnMark
		var rp, rm, ap, am string
		var started, ended, startSeq, endSeq int64
		if err := rs.Scan(&m.TurnID, &m.Session, &rp, &rm, &ap, &am, &m.FinalProfile, &m.Attempts, &m.Outcome,
			&m.Reason, &started, &ended, &startSeq, &endSeq); err != nil {
			return nil, false, db.wrap(err)
		}
		m.RequestedModel, m.FinalModel = joinModel(rp, rm), joinModel(ap, am)
		m.StartedAt, m.StartSeq, m.EndSeq = FormatMs(started), uint64(startSeq), uint64(endSeq)
		if ended > 0 {
			m.EndedAt = FormatMs(ended)
		}
		out = append(out, m)
	}
	if err := rs.Err(); err != nil {
		return nil, false, db.wrap(err)
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// lanes are a lane per auth profile of the agent (every profile with an
// event) with its windows overlapping [since, until], by provider then
// id; lastAt is the ledger's last event time.
func (db *DB) lanes(ctx context.Context, tx querier, agent string, since, until, lastAt int64) ([]ProfileLane, error) {
	ws, err := db.windows(ctx, tx, `WHERE agent = ? AND endsAt >= ? AND fromAt <= ?`, agent, since, until)
	if err != nil {
		return nil, err
	}
	byProfile := map[string][]*ProfileWindow{}
	for _, w := range ws {
		byProfile[w.id] = append(byProfile[w.id], w.w)
	}
	rs, err := tx.QueryContext(ctx, `SELECT profileId, provider FROM usage_stats WHERE agent = ?`, agent)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rs.Close()
	out := []ProfileLane{}
	for rs.Next() {
		var id, provider string
		if err := rs.Scan(&id, &provider); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, Lane(id, provider, byProfile[id], since, until, lastAt))
	}
	if err := rs.Err(); err != nil {
		return nil, db.wrap(err)
	}
	SortLanes(out)
	return out, nil
}
