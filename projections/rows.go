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

// prepared is a table's statements, prepared once per catch-up on the
// database's single connection.
type prepared struct {
	t        *table
	db       *DB
	put, get *sql.Stmt
	// putRows is put for putChunk rows at once.
	putRows *sql.Stmt
	// cacheRows bounds a keyed cache after each flush ([WithCacheRows]);
	// readBack counts the rows it reads back ([Result].ReadBack).
	cacheRows int
	readBack  *int
}

func (st *prepared) close() {
	for _, s := range []*sql.Stmt{st.put, st.get, st.putRows} {
		if s != nil {
			_ = s.Close()
		}
	}
}

// writer collects a flush's rows: each a statement and its arguments,
// or an operation of its own (do), run in the flush's transaction by
// [Projector.write].
type writer struct {
	table string // the table whose rows are being added
	ops   []writeOp
}

type writeOp struct {
	table string
	st    *sql.Stmt
	args  []any
	// do, when set, runs instead of st (it calls exec for its rows).
	do func(tx *txWriter) error
}

// put adds one row written with st.
func (w *writer) put(st *sql.Stmt, args []any) {
	w.ops = append(w.ops, writeOp{table: w.table, st: st, args: args})
}

// custom adds an operation of the table's own.
func (w *writer) custom(do func(tx *txWriter) error) {
	w.ops = append(w.ops, writeOp{table: w.table, do: do})
}

// txWriter runs a flush's operations in its transaction, counting the
// rows for [WithFailAfter].
type txWriter struct {
	ctx   context.Context
	tx    *sql.Tx
	p     *Projector
	bound map[*sql.Stmt]*sql.Stmt
	// rows maps a put statement to its putChunk-row form (prepared.putRows).
	rows map[*sql.Stmt]*sql.Stmt
	args []any // the arguments of a multi-row put, reused
}

// putChunk is how many rows of one table a flush writes per statement:
// the per-statement costs (database/sql's argument checks, SQLite's
// statement reset and start) were a third of the writer's CPU with one
// row per statement.
const putChunk = 32

// exec writes one row with st (a prepared statement of the catch-up).
func (w *txWriter) exec(st *sql.Stmt, args []any) error {
	if err := w.count(1); err != nil {
		return err
	}
	_, err := w.stmt(st).ExecContext(w.ctx, args...)
	return err
}

// count counts n rows about to be written for [WithFailAfter].
func (w *txWriter) count(n int) error {
	if w.p.failAfter > 0 {
		w.p.written += n
		if w.p.written >= w.p.failAfter {
			return ErrInjected
		}
	}
	return nil
}

// stmt is st bound to the transaction.
func (w *txWriter) stmt(st *sql.Stmt) *sql.Stmt {
	b := w.bound[st]
	if b == nil {
		b = w.tx.StmtContext(w.ctx, st)
		w.bound[st] = b
	}
	return b
}

// puts writes the rows of ops, which are puts of one statement, in order:
// putChunk rows per statement where the table has that form, one by one
// for the rest.
func (w *txWriter) puts(ops []writeOp) error {
	if multi := w.rows[ops[0].st]; multi != nil {
		for len(ops) >= putChunk {
			if err := w.count(putChunk); err != nil {
				return err
			}
			w.args = w.args[:0]
			for i := range ops[:putChunk] {
				w.args = append(w.args, ops[i].args...)
			}
			if _, err := w.stmt(multi).ExecContext(w.ctx, w.args...); err != nil {
				return err
			}
			ops = ops[putChunk:]
		}
	}
	for i := range ops {
		if err := w.exec(ops[i].st, ops[i].args); err != nil {
			return err
		}
	}
	return nil
}

// key identifies an aggregate instance: agent and envelope key.
type key struct{ agent, id string }

// keyedRow is a row of a table keyed by (agent, envelope key): one
// aggregate's folded state.
type keyedRow interface {
	// fold folds one of the table's events.
	fold(ev *events.Event)
	// values are every column in table order (the put's arguments).
	values() []any
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
const maxFreeRows = 1024

// keyed caches a table of aggregates: a row per (agent, envelope key),
// read back from the table the first time a catch-up meets the key
// (unless fresh says the event opens a new one), folded in memory, and
// upserted at the flush when it changed. After each flush the cache is
// bounded: a finished row ([evictable]) leaves it, and of the others the
// least recently folded leave until at most [prepared].cacheRows stay; a
// row that left is read back from the table when its key comes again.
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
	row        keyedRow
	dirty      bool
	prev, next *keyedEntry // the ring of keyedRows.lru
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
	e := c.rows[k]
	if e == nil {
		e = c.newEntry(k)
		if c.fresh == nil || !c.fresh(ev.Data) {
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
	e.row.fold(ev)
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

// release keeps e, which is in neither the map nor the ring, for reuse
// when its row can be reset.
func (c *keyedRows) release(e *keyedEntry) {
	if _, ok := e.row.(evictable); ok && len(c.free) < maxFreeRows {
		e.dirty = false
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

func (c *keyedRows) snapshot(w *writer) {
	for _, e := range c.dirty {
		w.put(c.st.put, e.row.values())
		e.dirty = false
	}
	c.flushed, c.dirty = append(c.flushed[:0], c.dirty...), c.dirty[:0]
}

// written lets the finished rows of the committed snapshot go, then the
// least recently folded clean rows beyond the bound. A row folded again
// since the snapshot is dirty and stays.
func (c *keyedRows) written() {
	for _, e := range c.flushed {
		if ev, ok := e.row.(evictable); ok && !e.dirty && e.prev != nil && ev.done() {
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
// makes none), values gives its columns in table order, and the flush
// inserts the rows.
func appended[R any](newRow func(ev *events.Event) (R, bool), values func(r *R) []any) cacheOf {
	return cacheOf{newRows: func(st prepared) rows {
		return &appendedRows[R]{st: st, newRow: newRow, values: values}
	}}
}

type appendedRows[R any] struct {
	st     prepared
	newRow func(ev *events.Event) (R, bool)
	values func(r *R) []any
	rows   []R
}

func (c *appendedRows[R]) fold(_ context.Context, ev *events.Event) error {
	if r, ok := c.newRow(ev); ok {
		c.rows = append(c.rows, r)
	}
	return nil
}

func (c *appendedRows[R]) snapshot(w *writer) {
	for i := range c.rows {
		w.put(c.st.put, c.values(&c.rows[i]))
	}
	c.rows = c.rows[:0]
}

func (c *appendedRows[R]) written() {}

// b2i stores a bool as 0/1.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
