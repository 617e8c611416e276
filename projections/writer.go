package projections

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
)

// prepared is a table's statements during a catch-up. The read-back
// (get) is a database/sql statement; the puts are the driver's own
// statements ([drvStmts]), prepared on the database's single connection.
type prepared struct {
	t   *table
	db  *DB
	get *sql.Stmt
	// i is the table's place in [Projector].stmts (and in its driver
	// statements).
	i int
	// cacheRows bounds a keyed cache after each flush ([WithCacheRows]);
	// readBack counts the rows it reads back ([Result].ReadBack).
	cacheRows int
	readBack  *int
	// open are the projector's open turns ([openTurns]): the turns
	// cache moves them, a SessionPruned reads them.
	open *openTurns
}

func (st *prepared) close() {
	if st.get != nil {
		_ = st.get.Close()
	}
}

// valuer is a row that appends its column values in table order (the
// put's arguments) to dst.
type valuer interface{ values(dst []any) []any }

// writer collects a flush's rows: each a table's put and its arguments
// (in vals, one row after the other), or an operation of its own (do),
// run in the flush's transaction by [Projector.write]. A Projector has one
// writer, reused by every flush: a flush is taken only once the one
// before it committed.
type writer struct {
	table string // the table whose rows are being added
	ops   []writeOp
	vals  []any
}

type writeOp struct {
	table string
	// st is the put's table ([prepared].i) and vals[off:off+n] its
	// arguments.
	st, off, n int
	// do, when set, runs instead of the put.
	do func(tx *txWriter) error
}

// reset empties w for the next flush, dropping the values it held.
func (w *writer) reset() {
	clear(w.vals)
	w.ops, w.vals = w.ops[:0], w.vals[:0]
}

// put adds row r written with st's put.
func (w *writer) put(st *prepared, r valuer) {
	off := len(w.vals)
	w.vals = r.values(w.vals)
	w.ops = append(w.ops, writeOp{table: w.table, st: st.i, off: off, n: len(w.vals) - off})
}

// putArgs adds one row written with st's put, its arguments given.
func (w *writer) putArgs(st *prepared, args ...any) {
	off := len(w.vals)
	w.vals = append(w.vals, args...)
	w.ops = append(w.ops, writeOp{table: w.table, st: st.i, off: off, n: len(args)})
}

// custom adds an operation of the table's own.
func (w *writer) custom(do func(tx *txWriter) error) {
	w.ops = append(w.ops, writeOp{table: w.table, st: -1, do: do})
}

// del adds the delete of t's row of key k ([table].delSQL). Deletes are
// rare (a pruned session): each is an operation of its own, which
// database/sql runs on the flush's transaction.
func (w *writer) del(t *table, k key) {
	w.custom(func(tx *txWriter) error {
		if err := tx.count(1); err != nil {
			return err
		}
		_, err := tx.tx.ExecContext(tx.ctx, t.delSQL, k.agent, k.id)
		return err
	})
}

// putChunk is how many rows of one table a flush writes per statement:
// the per-statement costs (argument checks, SQLite's statement reset and
// start) were a third of the writer's CPU with one row per statement.
const putChunk = 32

// drvStmts are a table's puts as statements of the driver
// (modernc.org/sqlite), executed below database/sql (sql.Conn.Raw) with
// a reused argument slice: database/sql converted and copied every
// argument of every row into a new slice (≈ 26 MB per 100k events
// rebuilt, the writer's largest allocation).
type drvStmts struct {
	// put writes one row, rows putChunk rows.
	put, rows driver.StmtExecContext
}

// driverStmts are the flush's puts on the driver connection dc (what
// sql.Conn.Raw gives), prepared on the flush's first put. They live only
// as long as the flush holds the connection ([Projector.write] closes
// them before it gives the connection back): database/sql does not know
// them, and a connection it closed with statements still open would stay
// open in SQLite (a cancelled query makes database/sql drop the
// connection).
func (p *Projector) driverStmts(ctx context.Context, dc any) ([]drvStmts, error) {
	if p.drv != nil {
		return p.drv, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("projections: the SQLite driver's connection %T cannot prepare statements", dc)
	}
	prep := func(q string, args int) (driver.StmtExecContext, error) {
		s, err := pc.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		x, ok := s.(driver.StmtExecContext)
		if !ok {
			_ = s.Close()
			return nil, fmt.Errorf("projections: the SQLite driver's statement %T cannot execute with a context", s)
		}
		if n := s.NumInput(); n >= 0 && n != args { // modernc answers -1 (not known)
			_ = s.Close()
			return nil, fmt.Errorf("%q takes %d arguments, the table has %d columns a row", q, n, args)
		}
		return x, nil
	}
	p.drv = make([]drvStmts, len(p.stmts))
	for i := range p.stmts {
		t := p.stmts[i].t
		var err error
		if p.drv[i].put, err = prep(t.putSQL(), len(t.columns)); err == nil {
			p.drv[i].rows, err = prep(t.putRowsSQL(putChunk), putChunk*len(t.columns))
		}
		if err != nil {
			p.closeDriverStmts()
			return nil, err
		}
	}
	return p.drv, nil
}

// closeDriverStmts closes the flush's driver statements (call it inside
// sql.Conn.Raw on their connection) and forgets them.
func (p *Projector) closeDriverStmts() {
	for _, d := range p.drv {
		for _, s := range []driver.StmtExecContext{d.put, d.rows} {
			if c, ok := s.(driver.Stmt); ok && c != nil {
				_ = c.Close()
			}
		}
	}
	p.drv = nil
}

// txWriter runs a flush's operations in its transaction, counting the
// rows for [WithFailAfter].
type txWriter struct {
	ctx  context.Context
	conn *sql.Conn
	tx   *sql.Tx // the flush's transaction, on conn
	p    *Projector
	vals []any
	nv   []driver.NamedValue // the arguments of one statement, reused
}

// exec writes one row with table st's put.
func (w *txWriter) exec(st int, args []any) error {
	if err := w.count(1); err != nil {
		return err
	}
	return w.conn.Raw(func(dc any) error {
		drv, err := w.p.driverStmts(w.ctx, dc)
		if err != nil {
			return err
		}
		return w.run(drv[st].put, args)
	})
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

// puts writes the rows of ops, which are puts of one table whose
// arguments follow each other in w.vals, in order: putChunk rows per
// statement, one by one for the rest.
func (w *txWriter) puts(ops []writeOp) error {
	return w.conn.Raw(func(dc any) error {
		drv, err := w.p.driverStmts(w.ctx, dc)
		if err != nil {
			return err
		}
		d := &drv[ops[0].st]
		// A row with one value too many or too few would shift every
		// later row of a putChunk statement (the driver ignores extra
		// arguments): each row must have the table's columns.
		cols := len(w.p.stmts[ops[0].st].t.columns)
		for i := range ops {
			if ops[i].n != cols {
				return fmt.Errorf("a row of %d values for the %d columns of %s", ops[i].n, cols, w.p.stmts[ops[0].st].t.name)
			}
		}
		for len(ops) >= putChunk {
			if err := w.count(putChunk); err != nil {
				return err
			}
			last := &ops[putChunk-1]
			if err := w.run(d.rows, w.vals[ops[0].off:last.off+last.n]); err != nil {
				return err
			}
			ops = ops[putChunk:]
		}
		for i := range ops {
			if err := w.count(1); err != nil {
				return err
			}
			if err := w.run(d.put, w.vals[ops[i].off:ops[i].off+ops[i].n]); err != nil {
				return err
			}
		}
		return nil
	})
}

// run executes s with args, converted as database/sql would convert them
// (driver.DefaultParameterConverter: an int becomes an int64).
func (w *txWriter) run(s driver.StmtExecContext, args []any) error {
	w.nv = w.nv[:0]
	for i, a := range args {
		switch x := a.(type) {
		case int64, string, float64, bool, []byte, nil:
		case int:
			a = int64(x)
		default:
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			a = v
		}
		w.nv = append(w.nv, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	_, err := s.ExecContext(w.ctx, w.nv)
	return err
}
