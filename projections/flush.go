package projections

import (
	"context"
	"errors"
	"fmt"
)

type flushed struct{ commits, events, skipped, quarantined int }

// flush writes every table's changed rows and checkpoint seq in one
// transaction, after checking that no other writer moved the checkpoint
// since the cache was consistent with it.
func (p *Projector) flush(ctx context.Context, c *cache, seq uint64) (flushed, error) {
	tx, err := p.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return flushed{}, p.db.wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	var have int64
	if err := tx.QueryRowContext(ctx, `SELECT seq FROM checkpoint WHERE id = 1`).Scan(&have); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	if uint64(have) != c.base {
		return flushed{}, errCheckpointMoved
	}
	w := &writer{ctx: ctx, tx: tx, p: p}
	for i, r := range c.tables {
		if err := r.write(w); err != nil {
			return flushed{}, p.rowErr(err, p.stmts[i].t.name)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE checkpoint SET seq = ?, commits = commits + ?, events = events + ? WHERE id = 1`,
		int64(seq), c.commits, c.events); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return flushed{}, p.db.wrap(err)
	}
	n := flushed{commits: c.commits, events: c.events, skipped: c.nSkipped, quarantined: len(c.quar.rows)}
	c.base, c.pending, c.commits, c.events, c.nSkipped = seq, 0, 0, 0, 0
	for _, r := range c.tables {
		r.written()
	}
	return n, nil
}

func (p *Projector) rowErr(err error, table string) error {
	if errors.Is(err, ErrInjected) {
		return err
	}
	return fmt.Errorf("projections: write %s: %w", table, p.db.wrap(err))
}
