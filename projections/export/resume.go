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

// checkHeld refuses, with an error wrapping ErrForeignOutput naming the
// output, a sink whose output holds records (a [Holder]) the ledger does
// not: its last record's sequence is past the stream's last one, or the
// ledger's record at that place (the N-th of commit Seq) has another
// time, agent or turn.
func checkHeld(ctx context.Context, st events.Store, sink Sink) error {
	h, ok := sink.(Holder)
	if !ok {
		return nil
	}
	last, ok := h.Holds()
	if !ok || last.Seq == 0 {
		return nil
	}
	name := "the output"
	if j, ok := sink.(*JSONL); ok && j.path != "" {
		name = j.path
	}
	end, err := st.LastSeq(ctx, "")
	if err != nil {
		return fmt.Errorf("export: %s: %w", name, err)
	}
	if last.Seq > end {
		return fmt.Errorf("export: %s holds records up to seq %d, past the stream's last sequence %d: %w (written from another ledger, or before its data was wiped); resuming after it would skip every record up to seq %d: write a new file, or move this one away",
			name, last.Seq, end, ErrForeignOutput, last.Seq)
	}
	theirs, err := recordAt(ctx, st, last.Seq, last.N)
	if err != nil {
		return fmt.Errorf("export: %s: %w", name, err)
	}
	mine := last.Last
	if theirs == nil || mine.Agent != theirs.Agent || mine.TurnID != theirs.TurnID || mine.Time != 0 && mine.Time != theirs.Time {
		has := "none"
		if theirs != nil {
			has = theirs.String()
		}
		return fmt.Errorf("export: %s: its last record (seq %d, record %d of its commit: %s) is not the ledger's (%s): %w (written from another ledger, or before its data was wiped); write a new file, or move this one away",
			name, last.Seq, last.N, mine, has, ErrForeignOutput)
	}
	return nil
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
