package export

import (
	"context"
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// resumeFrom is the first stream sequence an output that holds every
// record up to last needs: last's commit (a partly written one is then
// completed; the sink drops what it holds), or since (1 at least) for an
// output that holds none.
func resumeFrom(last Position, since uint64) uint64 {
	if last.Seq > 0 {
		return last.Seq
	}
	return max(since, 1)
}

// keepConsumer reports whether a durable consumer standing at cs can go
// on for an output that holds every record up to last and needs every one
// from sequence from: it holds no unacknowledged delivery (one would come
// again after newer commits) and stands at from, or past it over commits
// holding no record after last (the output's own earlier run acknowledged
// them). Any other consumer is to be moved to from: one behind (it would
// deliver records before from) or one that another output advanced (its
// records would be missing).
func keepConsumer(ctx context.Context, st events.Store, last Position, from uint64, cs events.CursorState) (bool, error) {
	switch {
	case cs.Pending > 0 || cs.Acked+1 < from:
		return false, nil
	case cs.Acked+1 == from:
		return true, nil
	}
	lacks, err := lacksRecords(ctx, st, last, from, cs.Acked)
	return !lacks, err
}

// lacksRecords reports whether the commits from..through hold a record
// after last. Messages that are not fledger commits hold none.
func lacksRecords(ctx context.Context, st events.Store, last Position, from, through uint64) (bool, error) {
	n := 0 // records of last's commit
	lacks := false
	err := eachEvent(ctx, st, from, through, func(ev events.Event) bool {
		if _, ok := projections.DecisionRecordOf(ev); !ok {
			return true
		}
		if ev.Seq == last.Seq {
			n++
		}
		lacks = ev.Seq > last.Seq || n > last.N
		return !lacks
	})
	return lacks, err
}

// eachEvent calls fn with each event of the commits from..through, in
// order, until it returns false. Messages that are not fledger commits
// hold none.
func eachEvent(ctx context.Context, st events.Store, from, through uint64, fn func(events.Event) bool) error {
	for ev, err := range st.Read(ctx, from) {
		if err != nil {
			var de *events.DecodeError
			if errors.As(err, &de) && de.Seq != 0 {
				if de.Seq > through {
					break
				}
				continue
			}
			return fmt.Errorf("export: read %d..%d: %w", from, through, err)
		}
		if ev.Seq > through || !fn(ev) {
			break
		}
	}
	return nil
}

// ErrForeignOutput: the output holds a record the ledger does not (it
// was written from another ledger, or before the ledger's data was wiped
// and written again): resuming after it would skip, or mix in, records.
var ErrForeignOutput = errors.New("export: the output holds records this ledger does not")

// Continued is an output whose records all lie before the stream's
// first sequence, which is past 1: the stream continues an archived one
// (created with a first sequence after a rotation, docs/operations.md
// "Start a fresh stream (rotation)") and the output was written from the
// archived period. The export goes on at the stream's first sequence.
type Continued struct {
	// Output names the output (a file's path).
	Output string
	// Last is the sequence of the output's last record.
	Last uint64
	// First is the stream's first sequence, where the export goes on.
	First uint64
}

// String is the note an exporter prints about it.
func (c Continued) String() string {
	s := fmt.Sprintf("%s: its last record (seq %d) is before the stream's first sequence %d (a stream continuing an archived one, after a rotation): continuing after the archived range: the stream starts at %d",
		c.Output, c.Last, c.First, c.First)
	if c.First == c.Last+1 {
		// The stream starts right after the file's last record: right
		// when the archived stream's last commit held a decision, but
		// also what --first-seq taken from this file (not from the
		// stream) gives, and then the archived commits after the last
		// record share their sequences with this stream's first ones.
		s += fmt.Sprintf("; check that %d is the archived stream's last sequence + 1 (nats stream info before it was removed, or state.last_seq in its backup.json), not this file's last record + 1", c.First)
	}
	return s
}

// foreignCauses are the ways an output comes to hold records the ledger
// does not, named in the refusal.
const foreignCauses = "written from another ledger, before its data was wiped, or in an archived period this stream does not continue: after a rotation, a file of the archived period goes on only on a stream created with --first-seq past its last record"

// checkHeld refuses, with an error wrapping ErrForeignOutput naming the
// output, a sink whose output holds records (a [Holder]) the ledger does
// not: its last record's sequence is past the stream's last one, or the
// ledger's record at that place (the N-th of commit Seq) has another
// time, agent or turn. An output whose last record lies before the
// stream's first sequence (past 1: a stream continuing an archived one)
// is the archived period's: it is not refused, and the continuation is
// returned (ok) — the output needs every record from the stream's first
// sequence.
func checkHeld(ctx context.Context, st events.Store, sink Sink) (c Continued, ok bool, err error) {
	h, isHolder := sink.(Holder)
	if !isHolder {
		return Continued{}, false, nil
	}
	last, holds := h.Holds()
	if !holds || last.Seq == 0 {
		return Continued{}, false, nil
	}
	name := "the output"
	if j, isFile := sink.(*JSONL); isFile && j.path != "" {
		name = j.path
	}
	l, err := st.Ledger(ctx)
	if err != nil {
		return Continued{}, false, fmt.Errorf("export: %s: %w", name, err)
	}
	if l.FirstSeq > 1 && last.Seq < l.FirstSeq {
		return Continued{Output: name, Last: last.Seq, First: l.FirstSeq}, true, nil
	}
	if last.Seq > l.LastSeq {
		return Continued{}, false, fmt.Errorf("export: %s holds records up to seq %d, past the stream's last sequence %d: %w (%s); resuming after it would skip every record up to seq %d: write a new file, or move this one away",
			name, last.Seq, l.LastSeq, ErrForeignOutput, foreignCauses, last.Seq)
	}
	theirs, err := recordAt(ctx, st, last.Seq, last.N)
	if err != nil {
		return Continued{}, false, fmt.Errorf("export: %s: %w", name, err)
	}
	mine := last.Last
	if theirs == nil || mine.Agent != theirs.Agent || mine.TurnID != theirs.TurnID || mine.Time != 0 && mine.Time != theirs.Time {
		has := "none"
		if theirs != nil {
			has = theirs.String()
		}
		return Continued{}, false, fmt.Errorf("export: %s: its last record (seq %d, record %d of its commit: %s) is not the ledger's (%s): %w (%s); write a new file, or move this one away",
			name, last.Seq, last.N, mine, has, ErrForeignOutput, foreignCauses)
	}
	return Continued{}, false, nil
}

// recordAt is the id of the n-th decision record (from 1) of the commit at
// seq, or nil when that commit holds fewer (or is no fledger commit).
func recordAt(ctx context.Context, st events.Store, seq uint64, n int) (*RecordID, error) {
	var (
		i  int
		id *RecordID
	)
	err := eachEvent(ctx, st, seq, seq, func(ev events.Event) bool {
		if r, ok := projections.DecisionRecordOf(ev); ok {
			if i++; i == n {
				id = &RecordID{Time: r.Time, Agent: r.Agent, TurnID: r.TurnID}
			}
		}
		return id == nil
	})
	return id, err
}
