package projections

import (
	"context"
	"errors"
	"fmt"
)

type flushed struct{ commits, events, skipped, quarantined int }

// flushJob is one batch on its way to the database: the changed rows
// through checkpoint seq, taken from the cache into the projector's
// writer when the batch ended, and written in one transaction on a
// goroutine of their own while the next batch folds. done gets the
// transaction's outcome.
type flushJob struct {
	base, seq uint64 // the checkpoint the batch starts from and ends at
	n         flushed
	done      chan error
}

// startFlush takes every table's changed rows through checkpoint seq from
// the cache and starts writing them. The cache is consistent with seq
// from then on; its rows go at [cache.written] once the job committed.
// The job writes the projector's writer: no job is being written when
// a flush starts ([attempt.flush] waits for the one before).
func (p *Projector) startFlush(ctx context.Context, c *cache, seq uint64) *flushJob {
	j := &flushJob{base: c.base, seq: seq, done: make(chan error, 1),
		n: flushed{commits: c.commits, events: c.events, skipped: c.nSkipped, quarantined: len(c.quar.rows)}}
	w := &p.w
	w.reset()
	for i, r := range c.tables {
		w.table = p.stmts[i].t.name
		r.snapshot(w)
	}
	c.base, c.pending, c.commits, c.events, c.nSkipped = seq, 0, 0, 0, 0
	go func() { j.done <- p.write(ctx, j) }()
	return j
}

// write writes a job's rows and checkpoint in one transaction, after
// checking that no other writer moved the checkpoint since the job's base.
// The transaction is database/sql's, on a connection taken for the flush;
// the puts run on it below database/sql ([txWriter.puts]).
func (p *Projector) write(ctx context.Context, j *flushJob) error {
	conn, err := p.db.sql.Conn(ctx)
	if err != nil {
		return p.db.wrap(err)
	}
	defer conn.Close()
	// Runs after the transaction ended and before the connection goes
	// back: the driver statements never outlive the flush.
	defer func() {
		if err := conn.Raw(func(any) error { p.closeDriverStmts(); return nil }); err != nil {
			p.drv = nil // a connection already gone took them with it
		}
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return p.db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	var have int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoint WHERE id = 1`).Scan(&have); err != nil {
		return p.db.wrap(err)
	}
	if uint64(have) != j.base {
		return errCheckpointMoved
	}
	w := &txWriter{ctx: ctx, conn: conn, tx: tx, p: p, vals: p.w.vals, nv: p.nv}
	defer func() { clear(w.nv[:cap(w.nv)]); p.nv = w.nv[:0] }()
	ops := p.w.ops
	for i := 0; i < len(ops); {
		op := &ops[i]
		n := 1
		if op.do != nil {
			err = op.do(w)
		} else {
			// A run of puts of one table is written together.
			for i+n < len(ops) && ops[i+n].do == nil && ops[i+n].st == op.st {
				n++
			}
			err = w.puts(ops[i : i+n])
		}
		if err != nil {
			return p.rowErr(err, op.table)
		}
		i += n
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoint SET seq = ?, commits = commits + ?, events = events + ? WHERE id = 1`,
		int64(j.seq), j.n.commits, j.n.events); err != nil {
		return p.db.wrap(err)
	}
	return p.db.wrap(tx.Commit())
}

// written lets every table's cache know its last snapshot committed.
func (c *cache) written() {
	for _, r := range c.tables {
		r.written()
	}
}

func (p *Projector) rowErr(err error, table string) error {
	if errors.Is(err, ErrInjected) {
		return err
	}
	return fmt.Errorf("projections: write %s: %w", table, p.db.wrap(err))
}
