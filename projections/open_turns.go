package projections

import (
	"context"

	"github.com/fledger/fledger/commands/policy"
)

// openTurns are the open turns at the point of the fold: each turn of
// an agent that has a TurnStarted and whose phase is running or waiting
// (turns.outcome unfinished), with its session, and how many each (agent,
// session) has. A SessionPruned folded while its session has one is void
// ([keyedRows.fold]), as in the engine.
//
// A [Projector] holds them across catch-ups. They are read only when a
// catch-up first folds a SessionPruned ([openTurns.load]): the turns
// table's unfinished rows (a scan of the table, once) with what the
// catch-up's cache holds over them. From then on every turn event folded
// moves them ([openTurns.set]). They are consistent with the checkpoint
// at, and forgotten ([openTurns.reset]) when a catch-up fails (its folds
// beyond the checkpoint never committed) or starts from another
// checkpoint (another writer moved it): the next prune reads them again.
type openTurns struct {
	loaded bool
	at     uint64         // the checkpoint they are consistent with
	turn   map[key]string // open turn (agent, turn id) → its session
	count  map[key]int    // (agent, session) → its open turns
	// cache is the turns table's cache of the running attempt.
	cache *keyedRows
}

// reset forgets every open turn: the next prune reads them again.
func (o *openTurns) reset() {
	o.loaded, o.at, o.turn, o.count = false, 0, nil, nil
}

// begin starts an attempt from checkpoint base with the turns cache c.
func (o *openTurns) begin(base uint64, c *keyedRows) {
	if o.loaded && o.at != base {
		o.reset()
	}
	o.cache = c
}

// end ends the attempt: on success the tally is consistent with the
// checkpoint it reached, else forgotten.
func (o *openTurns) end(to uint64, err error) {
	o.cache = nil
	if err != nil {
		o.reset()
		return
	}
	o.at = to
}

// folded follows turn t after one of its events folded into r.
func (o *openTurns) folded(t key, r *turnRow) {
	if o.loaded {
		s, ok := r.openSession()
		o.set(t, s, ok)
	}
}

// set records turn t as open in session (ok) or not open.
func (o *openTurns) set(t key, session string, ok bool) {
	was, open := o.turn[t]
	if open == ok && was == session {
		return
	}
	if open {
		s := key{t.agent, was}
		if o.count[s]--; o.count[s] == 0 {
			delete(o.count, s)
		}
		delete(o.turn, t)
	}
	if ok {
		o.turn[t] = session
		o.count[key{t.agent, session}]++
	}
}

// has reports whether agent's session has an open turn, reading the
// open turns first if need be.
func (o *openTurns) has(ctx context.Context, db *DB, agent, session string) (bool, error) {
	if !o.loaded {
		if err := o.load(ctx, db); err != nil {
			return false, err
		}
	}
	return o.count[key{agent, session}] > 0, nil
}

// openTurnsSQL lists the turns whose rows are open: unfinished and opened
// by a TurnStarted (what [turnRow.loaded] reads back as started).
const openTurnsSQL = `SELECT agent, turnId, sessionId FROM turns WHERE outcome = '` + OutcomeUnfinished + `' AND (sessionId != '' OR startedAt != 0)`

// load reads the open turns: the table's, then the cache's over them (a
// cached turn's state may be ahead of its row, and every row of the
// batch being written is still cached).
func (o *openTurns) load(ctx context.Context, db *DB) error {
	o.turn, o.count = map[key]string{}, map[key]int{}
	rows, err := db.sql.QueryContext(ctx, openTurnsSQL)
	if err != nil {
		return db.wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var t key
		var session string
		if err := rows.Scan(&t.agent, &t.id, &session); err != nil {
			return db.wrap(err)
		}
		o.set(t, session, true)
	}
	if err := rows.Err(); err != nil {
		return db.wrap(err)
	}
	for t, e := range o.cache.rows { // over the table's
		s, ok := e.row.(*turnRow).openSession()
		o.set(t, s, ok)
	}
	o.loaded = true
	return nil
}

// openSession is the session of the turn when it is open: started (a
// TurnStarted, or a row read back as one) and running or waiting.
func (r *turnRow) openSession() (string, bool) {
	open := r.st.TurnID != "" && (r.st.Phase == policy.PhaseRunning || r.st.Phase == policy.PhaseWaiting)
	return r.st.Session, open
}
