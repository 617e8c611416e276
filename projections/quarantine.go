package projections

import (
	"context"

	"github.com/fledger/fledger/events"
)

// Quarantine kinds ([Quarantined].Kind).
const (
	// QuarantineUndecodable is a stored message that is not a fledger
	// commit this build can decode (not JSON, no events, an unknown type,
	// a version with no upcaster).
	QuarantineUndecodable = "undecodable"
	// QuarantineMissing is a run of sequences missing inside the stream
	// (the stream denies deletes, so it is damage).
	QuarantineMissing = "missing"
)

// Quarantined is one row of the quarantined table: a stored message the
// projector could not decode and skipped, or a run of missing sequences
// (Seq..LastSeq). It is written in the transaction of the checkpoint that
// passes it, so a rebuild records the same rows.
type Quarantined struct {
	// Seq is the stream sequence; LastSeq the last sequence of a missing
	// run (equal to Seq for a message).
	Seq     uint64 `json:"seq"`
	LastSeq uint64 `json:"last_seq"`
	// Kind is QuarantineUndecodable or QuarantineMissing.
	Kind string `json:"kind"`
	// Subject and Size (bytes) describe the message ("" and 0 when
	// missing); Reason says why it was not decoded.
	Subject string `json:"subject,omitempty"`
	Size    int    `json:"size"`
	Reason  string `json:"reason"`
}

// QuarantineLogPrefix starts the projector's log message for each
// quarantined message or missing run.
const QuarantineLogPrefix = "projections: quarantined:"

// quarantined is the quarantined table: a row per [Quarantined]. Nothing
// folds it; [Projector] records each undecodable message and missing run.
var quarantined = register(&table{
	name: "quarantined", order: 70, key: 1, withoutRowID: true,
	columns: []column{
		integer("seq"), integer("lastSeq"), text("kind"), text("subject"), integer("size"), text("reason"),
	},
	rows: cacheOf{newRows: func(st prepared) rows { return &quarantineRows{st: st} }},
})

type quarantineRow = Quarantined

// QuarantinedOf describes a read's *events.DecodeError as the projector
// records it.
func QuarantinedOf(de *events.DecodeError) Quarantined { return newQuarantineRow(de) }

func newQuarantineRow(de *events.DecodeError) quarantineRow {
	r := quarantineRow{Seq: de.Seq, LastSeq: de.Seq, Kind: QuarantineUndecodable, Subject: de.Subject, Size: de.Size, Reason: de.Reason()}
	if de.Gap() {
		r.Kind, r.LastSeq = QuarantineMissing, max(de.Through, de.Seq)
	}
	return r
}

func (r *quarantineRow) values(dst []any) []any {
	return append(dst, int64(r.Seq), int64(r.LastSeq), r.Kind, r.Subject, r.Size, r.Reason)
}

// quarantineRows caches the quarantined rows of a catch-up in stream
// order.
type quarantineRows struct {
	st   prepared
	rows []quarantineRow
}

func (c *quarantineRows) snapshot(w *writer) {
	for _, r := range c.rows {
		if r.Kind != QuarantineMissing || r.Seq <= 1 {
			w.put(&c.st, &r)
			continue
		}
		// The rest of a run an earlier catch-up stopped inside: extend
		// its row, so the rows are a rebuild's.
		put := c.st.i
		w.custom(func(tx *txWriter) error {
			res, err := tx.tx.ExecContext(tx.ctx, `UPDATE quarantined SET lastSeq = ? WHERE kind = ? AND lastSeq = ?`,
				int64(r.LastSeq), QuarantineMissing, int64(r.Seq-1))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				return nil
			}
			return tx.exec(put, r.values(nil))
		})
	}
	c.rows = c.rows[:0]
}

func (c *quarantineRows) written() {}

// Quarantined lists the quarantined messages and missing runs in stream
// order.
func (db *DB) Quarantined(ctx context.Context) ([]Quarantined, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+quarantined.list+" FROM quarantined ORDER BY seq")
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []Quarantined
	for rows.Next() {
		var q Quarantined
		if err := rows.Scan(&q.Seq, &q.LastSeq, &q.Kind, &q.Subject, &q.Size, &q.Reason); err != nil {
			return nil, db.wrap(err)
		}
		out = append(out, q)
	}
	return out, db.wrap(rows.Err())
}
