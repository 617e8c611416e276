package projections

import "log/slog"

// skippedEvents is the skipped_events table: per event type the projector
// skipped as unknown ([WithSkipUnknown]), how many and the first and last
// stream sequence. Nothing folds it; [Projector] records each skip.
var skippedEvents = register(&table{
	name: "skipped_events", order: 60, key: 1, withoutRowID: true,
	columns:    []column{text("type"), integer("count"), integer("firstSeq"), integer("lastSeq")},
	onConflict: "ON CONFLICT (type) DO UPDATE SET count = count + excluded.count, lastSeq = excluded.lastSeq",
	rows: cacheOf{newRows: func(st prepared) rows {
		return &skipRows{st: st, rows: map[string]*skipRow{}}
	}},
})

// skipRows caches the skips of a catch-up by type.
type skipRows struct {
	st   prepared
	rows map[string]*skipRow
}

// skipRow is one skipped_events row's change since the last flush.
type skipRow struct {
	typ string
	// count is the number skipped since the last flush (added to the
	// row's count); firstSeq is kept from the row's first insert.
	count             int
	firstSeq, lastSeq uint64
	dirty             bool
}

// add logs and counts one skipped event.
func (c *skipRows) add(log *slog.Logger, typ string, seq uint64, why string) {
	if typ == "" {
		typ = "(unreadable)"
	}
	log.Warn("projections: skipping an event of unknown type", "type", typ, "seq", seq, "why", why)
	s := c.rows[typ]
	if s == nil {
		s = &skipRow{typ: typ}
		c.rows[typ] = s
	}
	if s.count == 0 {
		s.firstSeq = seq
	}
	s.count++
	s.lastSeq = seq
	s.dirty = true
}

func (c *skipRows) snapshot(w *writer) {
	for _, s := range c.rows {
		if s.dirty {
			w.putArgs(&c.st, s.typ, s.count, int64(s.firstSeq), int64(s.lastSeq))
			s.dirty, s.count = false, 0 // count is the delta since the last flush
		}
	}
}

func (c *skipRows) written() {}
