package projections

// (This file is not profile_windows.go: Go builds a file named
// *_windows.go on Windows only.)

import (
	"context"
	"database/sql"
	"errors"

	"github.com/fledger/fledger/events"
)

// profileWindows is the profile_windows table: one row per cooldown,
// disable or provider block an auth profile went through ([ProfileTrack]:
// the profile's events folded with policy.EvolveProfile, a window opening
// when its state sets a deadline after the event and ending when the
// state changes or goes), keyed by the event that set it and its kind.
// A window still open has closeSeq 0 and endedAt 0; endsAt is when it
// ends as far as the stream knows (endedAt, else untilAt), so the
// windows overlapping [since, until] are those with endsAt ≥ since and
// fromAt ≤ until (index profile_windows_ends).
var profileWindows = register(&table{
	name: "profile_windows", order: 80, key: 5, withoutRowID: true, upsert: true,
	columns: []column{
		text("agent"), text("profileId"), integer("setSeq"), integer("setIdx"),
		{name: "kind", typ: "INTEGER", check: "kind IN (0, 1, 2)"},
		text("provider"), text("state"), text("reason"), text("model"), text("source"),
		millis("fromAt"), millis("untilAt"), millis("endedAt"), millis("endsAt"),
		integer("clearedSeq"), integer("closeSeq"), integer("closeIdx"),
	},
	indexes: []index{
		{"profile_windows_ends", []string{"agent", "endsAt"}},
	},
	folds: []events.Payload{
		events.ProfileFailureRecorded{}, events.ProfileSucceeded{}, events.ProfileUsed{}, events.ProfileCleared{},
	},
	rows: cacheOf{newRows: func(st prepared) rows { return &windowRows{st: st, tracks: map[key]*ProfileTrack{}} }},
})

// windowRows caches the profiles' tracks met during a catch-up (their
// open windows) and the windows changed since the last flush. A profile
// met for the first time is read back: its state from usage_stats (the
// same fold, flushed in the same transactions) and its open windows
// from profile_windows.
type windowRows struct {
	st     prepared
	tracks map[key]*ProfileTrack
	dirty  []dirtyWindow
	// queued is each window's place in dirty: a window that opens and
	// ends in one batch is written once, with what it is at the flush.
	queued map[*ProfileWindow]int
}

type dirtyWindow struct {
	key
	provider string
	w        *ProfileWindow
}

func (c *windowRows) fold(ctx context.Context, ev *events.Event) error {
	k := key{ev.Agent, ev.Key}
	tr := c.tracks[k]
	if tr == nil {
		var err error
		if tr, err = c.load(ctx, k); err != nil {
			return err
		}
		c.tracks[k] = tr
	}
	ended, opened := tr.Fold(ev.Seq, ev.Index, ev.At.UnixMilli(), ev.Data)
	c.queue(k, tr.Provider, ended)
	c.queue(k, tr.Provider, opened)
	return nil
}

// queue marks windows of profile k changed. A window queued already keeps
// its place and takes the later provider: its row is written once, as the
// last of its puts would have left it (the rows of other windows do not
// depend on the order).
func (c *windowRows) queue(k key, provider string, ws []*ProfileWindow) {
	for _, w := range ws {
		if i, ok := c.queued[w]; ok {
			c.dirty[i].provider = provider
			continue
		}
		if c.queued == nil {
			c.queued = map[*ProfileWindow]int{}
		}
		c.queued[w] = len(c.dirty)
		c.dirty = append(c.dirty, dirtyWindow{k, provider, w})
	}
}

// load reads profile k's track back: its folded state and open windows.
func (c *windowRows) load(ctx context.Context, k key) (*ProfileTrack, error) {
	tr := NewProfileTrack(k.id)
	r := &profileRow{key: k}
	err := c.st.db.sql.QueryRowContext(ctx, usageStats.getSQL(), k.agent, k.id).Scan(r.dest()...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return tr, nil
	case err != nil:
		return nil, c.st.db.wrap(err)
	}
	if err := r.loaded(k.id); err != nil {
		return nil, &DBError{Path: c.st.db.path, Detail: usageStats.name + "." + err.Error(), Err: ErrCorrupt}
	}
	tr.st, tr.Provider = r.st, r.st.Provider
	open, err := c.st.db.windows(ctx, c.st.db.sql, `WHERE agent = ? AND profileId = ? AND closeSeq = 0`, k.agent, k.id)
	if err != nil {
		return nil, err
	}
	for _, w := range open {
		if tr.Provider == "" {
			tr.Provider = w.provider
		}
		tr.open[w.w.kind] = w.w
	}
	return tr, nil
}

func (c *windowRows) snapshot(w *writer) {
	for i := range c.dirty {
		d := &c.dirty[i]
		w.put(&c.st, d)
	}
	clear(c.dirty)
	c.dirty = c.dirty[:0]
	clear(c.queued)
}

// values appends the window's columns in table order, as it is now.
func (d *dirtyWindow) values(dst []any) []any {
	x := d.w
	ends := x.ended
	if ends == 0 {
		ends = x.until
	}
	return append(dst, d.agent, d.id, int64(x.SetSeq), x.setIdx, x.kind, d.provider,
		x.State, x.Reason, x.Model, x.Source, x.from, x.until, x.ended, ends,
		int64(x.ClearedSeq), int64(x.closeSeq), x.closeIdx)
}

func (c *windowRows) written() {}

// storedWindow is a profile_windows row read back.
type storedWindow struct {
	key
	provider string
	w        *ProfileWindow
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// windows reads through q the profile_windows rows that where (a WHERE
// clause on its columns, with args) selects.
func (db *DB) windows(ctx context.Context, q querier, where string, args ...any) ([]storedWindow, error) {
	rs, err := q.QueryContext(ctx, `SELECT agent, profileId, setSeq, setIdx, kind, provider, state, reason, model, source,
		fromAt, untilAt, endedAt, clearedSeq, closeSeq, closeIdx FROM profile_windows `+where, args...)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rs.Close()
	var out []storedWindow
	for rs.Next() {
		s := storedWindow{w: &ProfileWindow{}}
		x := s.w
		var setSeq, cleared, closeSeq int64
		if err := rs.Scan(&s.agent, &s.id, &setSeq, &x.setIdx, &x.kind, &s.provider, &x.State, &x.Reason,
			&x.Model, &x.Source, &x.from, &x.until, &x.ended, &cleared, &closeSeq, &x.closeIdx); err != nil {
			return nil, db.wrap(err)
		}
		if x.kind < 0 || x.kind >= len(windowStates) {
			return nil, &DBError{Path: db.path, Detail: "profile_windows.kind " + x.State + " out of range", Err: ErrCorrupt}
		}
		x.SetSeq, x.ClearedSeq, x.closeSeq = uint64(setSeq), uint64(cleared), uint64(closeSeq)
		out = append(out, s)
	}
	return out, db.wrap(rs.Err())
}
