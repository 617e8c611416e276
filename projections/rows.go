package projections

import (
	"context"
	"database/sql"
	"errors"

	"github.com/fledger/fledger/events"
)

// rows is one table's cache during a catch-up: what the table folded
// since the last flush, written by the flush inside its transaction.
// The flush writes on its own goroutine while folding goes on, so a
// cache hands it copies.
type rows interface {
	// snapshot adds the rows changed since the last flush to w, with
	// their values as they are now, and marks them clean.
	snapshot(w *writer)
	// written is called on the folding goroutine once the transaction
	// of the last snapshot committed.
	written()
}

// folder is the cache of a table that folds events (its [table].folds).
type folder interface {
	rows
	// fold folds one decoded event of a type the table folds.
	fold(ctx context.Context, ev *events.Event) error
}

// cacheOf says how a table caches its rows during a catch-up: newRows
// makes the cache, loads says it reads rows back (prepares the get
// statement).
type cacheOf struct {
	newRows func(st prepared) rows
	loads   bool
}

// key identifies an aggregate instance: agent and envelope key.
type key struct{ agent, id string }

// keyedRow is a row of a table keyed by (agent, envelope key): one
// aggregate's folded state.
type keyedRow interface {
	// fold folds one of the table's events.
	fold(ev *events.Event)
	// values appends every column in table order (the put's arguments)
	// to dst.
	values(dst []any) []any
	// dest are the scan destinations of the non-key columns in table
	// order (the get's result).
	dest() []any
	// loaded completes a row read back with dest for key id (decodes its
	// JSON columns); an error names the column and makes the database
	// corrupt.
	loaded(id string) error
}

// evictable is a keyedRow that can leave the cache once written (a
// finished turn): the next event of its key reads it back. A row that
// left is reused for the next new key: reset makes it the new row of k.
type evictable interface {
	done() bool
	reset(k key)
}

// maxFreeRows bounds the rows kept for reuse ([evictable]) per table.
const maxFreeRows = 2048

// keyed caches a table of aggregates: a row per (agent, envelope key),
// read back from the table the first time a catch-up meets the key
// (unless fresh says the event opens a new one), folded in memory, and
// upserted at the flush when it changed. An event of the table's
// [table].deletes deletes the key's row instead: the flush deletes it,
// and the key's next event folds into a new row, as if the key never
// had one, unless the key's session has an open turn ([openTurns]): then
// the event is void. A turns row moves the open turns as it folds. After
// each flush the cache is bounded: a finished row
// ([evictable]) and a deleted one leave it, and of the others the least
// recently folded leave until at most [prepared].cacheRows stay; a row
// that left is read back from the table when its key comes again.
func keyed(newRow func(k key) keyedRow, fresh func(events.Payload) bool) cacheOf {
	return cacheOf{loads: true, newRows: func(st prepared) rows {
		c := &keyedRows{st: st, newRow: newRow, fresh: fresh, rows: map[key]*keyedEntry{}}
		c.lru.prev, c.lru.next = &c.lru, &c.lru
		return c
	}}
}

type keyedRows struct {
	st     prepared
	newRow func(k key) keyedRow
	fresh  func(events.Payload) bool
	rows   map[key]*keyedEntry
	dirty  []*keyedEntry // changed since the last snapshot, in fold order
	// flushed are the entries of the last snapshot, until it committed.
	flushed []*keyedEntry
	// lru is the sentinel of the ring of cached entries, the most
	// recently folded first.
	lru keyedEntry
	// free are entries that left the cache, kept for reuse when their
	// row is [evictable].
	free []*keyedEntry
}

type keyedEntry struct {
	key
	row   keyedRow
	dirty bool
	// gone: the row was deleted and nothing folded since (the table has
	// no row for the key once the flush committed); wiped: it was deleted
	// since the last snapshot, whose DELETE comes before any put.
	gone, wiped bool
	prev, next  *keyedEntry // the ring of keyedRows.lru
}

// unlink takes e out of the ring.
func (e *keyedEntry) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

// toFront puts e (in the ring or not) first after head.
func (e *keyedEntry) toFront(head *keyedEntry) {
	if e.prev != nil {
		e.unlink()
	}
	e.prev, e.next = head, head.next
	head.next.prev = e
	head.next = e
}

func (c *keyedRows) fold(ctx context.Context, ev *events.Event) error {
	k := key{ev.Agent, ev.Key}
	del := c.st.t.deleted[ev.Type]
	if del {
		// A prune of a session with an open turn is void (the engine's
		// rule): it changes nothing.
		open, err := c.st.open.has(ctx, c.st.db, ev.Agent, ev.Key)
		if err != nil || open {
			return err
		}
	}
	e := c.rows[k]
	if e == nil {
		e = c.newEntry(k)
		// A deleted row need not be read: whatever it held goes.
		if !del && (c.fresh == nil || !c.fresh(ev.Data)) {
			if err := c.load(ctx, k, e.row); err != nil {
				c.release(e)
				return err
			}
		}
		c.rows[k] = e
	}
	if c.lru.next != e {
		e.toFront(&c.lru)
	}
	switch {
	case del:
		c.wipe(e)
	case e.gone:
		e.gone = false // a new row: wipe left it as newRow makes it
		fallthrough
	default:
		e.row.fold(ev)
		if r, ok := e.row.(*turnRow); ok {
			c.st.open.folded(k, r)
		}
	}
	if !e.dirty {
		e.dirty = true
		c.dirty = append(c.dirty, e)
	}
	return nil
}

// newEntry is a new entry for k: one that left the cache, or a new one.
func (c *keyedRows) newEntry(k key) *keyedEntry {
	if n := len(c.free); n > 0 {
		e := c.free[n-1]
		c.free[n-1], c.free = nil, c.free[:n-1]
		e.key = k
		e.row.(evictable).reset(k)
		return e
	}
	return &keyedEntry{key: k, row: c.newRow(k)}
}

// wipe deletes e's row: e holds a new row for its key, and the next
// snapshot deletes the table's row.
func (c *keyedRows) wipe(e *keyedEntry) {
	if r, ok := e.row.(evictable); ok {
		r.reset(e.key)
	} else {
		e.row = c.newRow(e.key)
	}
	e.gone, e.wiped = true, true
}

// release keeps e, which is in neither the map nor the ring, for reuse
// when its row can be reset. The row is emptied now, so that what it
// held is not kept alive (nor marked by the GC) while it waits.
func (c *keyedRows) release(e *keyedEntry) {
	if r, ok := e.row.(evictable); ok && len(c.free) < maxFreeRows {
		r.reset(key{})
		e.key, e.dirty, e.gone, e.wiped = key{}, false, false, false
		c.free = append(c.free, e)
	}
}

// load reads k's row into r; a missing row leaves r new.
func (c *keyedRows) load(ctx context.Context, k key, r keyedRow) error {
	err := c.st.get.QueryRowContext(ctx, k.agent, k.id).Scan(r.dest()...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return c.st.db.wrap(err)
	}
	if err := r.loaded(k.id); err != nil {
		return &DBError{Path: c.st.db.path, Detail: c.st.t.name + "." + err.Error(), Err: ErrCorrupt}
	}
	*c.st.readBack++
	return nil
}

// snapshot deletes the rows deleted since the last one, then puts the
// changed rows that exist (one deleted and folded again since is a new
// row: deleted, then put).
func (c *keyedRows) snapshot(w *writer) {
	for _, e := range c.dirty {
		if e.wiped {
			w.del(c.st.t, e.key)
			e.wiped = false
		}
	}
	for _, e := range c.dirty {
		if !e.gone {
			w.put(&c.st, e.row)
		}
		e.dirty = false
	}
	c.flushed, c.dirty = append(c.flushed[:0], c.dirty...), c.dirty[:0]
}

// written lets the finished and the deleted rows of the committed
// snapshot go, then the least recently folded clean rows beyond the
// bound. A row folded again since the snapshot is dirty and stays.
func (c *keyedRows) written() {
	for _, e := range c.flushed {
		if e.dirty || e.prev == nil {
			continue
		}
		if ev, ok := e.row.(evictable); e.gone || ok && ev.done() {
			c.evict(e)
		}
	}
	c.flushed = c.flushed[:0]
	for len(c.rows) > c.st.cacheRows && !c.lru.prev.dirty && c.lru.prev != &c.lru {
		c.evict(c.lru.prev)
	}
}

// evict drops e from the cache.
func (c *keyedRows) evict(e *keyedEntry) {
	e.unlink()
	delete(c.rows, e.key)
	c.release(e)
}

// appended caches a table with a row per event (fallback_decisions):
// newRow makes the row of one of the table's events (false: the event
// makes none), whose values are its columns in table order, and the
// flush inserts the rows.
func appended[R any, P interface {
	*R
	valuer
}](newRow func(ev *events.Event) (R, bool)) cacheOf {
	return cacheOf{newRows: func(st prepared) rows {
		return &appendedRows[R, P]{st: st, newRow: newRow}
	}}
}

type appendedRows[R any, P interface {
	*R
	valuer
}] struct {
	st     prepared
	newRow func(ev *events.Event) (R, bool)
	rows   []R
}

func (c *appendedRows[R, P]) fold(_ context.Context, ev *events.Event) error {
	if r, ok := c.newRow(ev); ok {
		c.rows = append(c.rows, r)
	}
	return nil
}

func (c *appendedRows[R, P]) snapshot(w *writer) {
	for i := range c.rows {
		w.put(&c.st, P(&c.rows[i]))
	}
	clear(c.rows) // the values are in w
	c.rows = c.rows[:0]
}

func (c *appendedRows[R, P]) written() {}

// b2i stores a bool as 0/1.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
