package projections

import (
	"context"

	"github.com/fledger/fledger/events"
)

// cache is the folded state of one catch-up attempt: every table's cache
// (the rows touched since it began, the changed ones written at the next
// flush) and the counts of the batch.
type cache struct {
	base uint64 // checkpoint the cache is consistent with
	// tables are the caches in [tables] order; folders are indexed like
	// [tables] (nil for a table that folds nothing).
	tables  []rows
	folders []folder
	skips   *skipRows
	quar    *quarantineRows

	pending  int // events (and skips and quarantined) since the last flush
	commits  int
	events   int
	nSkipped int
}

// newCache makes every table's cache on the catch-up's statements.
func (p *Projector) newCache(base uint64) *cache {
	c := &cache{base: base, folders: make([]folder, len(tables))}
	n := 0
	for i, t := range tables {
		if t.rows.newRows == nil {
			continue
		}
		r := t.rows.newRows(p.stmts[n])
		n++
		c.tables = append(c.tables, r)
		if t == turns {
			p.open.begin(base, r.(*keyedRows))
		}
		switch r := r.(type) {
		case folder:
			c.folders[i] = r
		case *skipRows:
			c.skips = r
		case *quarantineRows:
			c.quar = r
		}
	}
	return c
}

// foldCommit folds one complete commit into the cache. Unknown types are
// checked first, so an error leaves the cache without any of the commit.
func (p *Projector) foldCommit(ctx context.Context, c *cache, commit []events.Event) error {
	for i := range commit {
		ev := &commit[i]
		if (!known(ev.Type) || ev.Data == nil) && !p.skipUnknown {
			return &UnknownTypeError{Type: ev.Type, Seq: ev.Seq, Index: ev.Index}
		}
	}
	c.commits++
	for i := range commit {
		ev := &commit[i]
		folders, ok := eventTables[ev.Type]
		if !ok || ev.Data == nil {
			p.skip(c, ev.Type, ev.Seq, "not a type of this projection schema version")
			continue
		}
		c.pending++
		c.events++
		for _, t := range folders {
			if err := c.folders[t].fold(ctx, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// quarantine logs and records one undecodable message or gap.
func (p *Projector) quarantine(c *cache, de *events.DecodeError) {
	r := newQuarantineRow(de)
	if de.Gap() {
		p.log.Warn(QuarantineLogPrefix+" stream sequences missing", "seq", r.Seq, "through", r.LastSeq)
	} else {
		p.log.Warn(QuarantineLogPrefix+" a message that is not a fledger commit", "seq", r.Seq, "subject", r.Subject, "bytes", r.Size, "why", r.Reason)
	}
	c.quar.rows = append(c.quar.rows, r)
	c.pending++
}

// skip logs and counts one skipped event.
func (p *Projector) skip(c *cache, typ string, seq uint64, why string) {
	c.skips.add(p.log, typ, seq, why)
	c.nSkipped++
	c.pending++
}
