package export

import (
	"context"
	"fmt"

	"github.com/fledger/fledger/projections"
)

// Sink receives decision records in stream order, in batches.
//
// Export returns nil only once every record of recs is delivered: written
// and flushed (and synced, for a file), or accepted by the collector. On an
// error some, none or all records may have been delivered; the caller
// offers the same batch again (at least once), so a sink should drop a
// record it already delivered when it can tell (see [JSONL]).
type Sink interface {
	Export(ctx context.Context, recs []Record) error
}

// Position is where an output stands: the stream sequence of the last
// record it holds and how many records of that commit it holds (zero: it
// holds none).
type Position struct {
	Seq uint64
	N   int
	// Last identifies the last record the output holds (zero when it
	// holds none), to tell output written from another ledger.
	Last RecordID
}

// RecordID is what identifies a decision record besides its place in the
// stream: its time, agent and turn.
type RecordID struct {
	Time   projections.UnixMillis
	Agent  string
	TurnID string
}

// String is the id as an error names it.
func (id RecordID) String() string {
	return fmt.Sprintf("time %s, agent %q, turn %q", id.Time, id.Agent, id.TurnID)
}

// Holder is a [Sink] whose output tells which records it holds (a [JSONL]
// file): [Follow] resumes the export after them, whatever position the
// durable consumer holds.
type Holder interface {
	Sink
	// Holds returns the position of the last record the output holds;
	// ok is false when it cannot tell (a JSONL writer such as stdout).
	Holds() (last Position, ok bool)
}

// cursor is the position of the last delivered record: its commit's
// stream sequence and how many records of that commit were delivered.
type cursor struct {
	seq uint64
	n   int
	id  RecordID // the last record's
}

// delivered reports whether r is at or before the cursor.
func (c cursor) delivered(r *Record) bool {
	return r.Seq < c.seq || (r.Seq == c.seq && r.ordinal < c.n)
}

// advance moves the cursor to r.
func (c *cursor) advance(r *Record) {
	c.seq, c.n = r.Seq, r.ordinal+1
	c.id = RecordID{Time: r.Time, Agent: r.Agent, TurnID: r.TurnID}
}
