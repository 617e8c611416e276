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
	for ev, err := range st.Read(ctx, from) {
		if err != nil {
			var de *events.DecodeError
			if errors.As(err, &de) && de.Seq != 0 {
				if de.Seq > through {
					break
				}
				continue
			}
			return false, fmt.Errorf("export: read %d..%d: %w", from, through, err)
		}
		if ev.Seq > through {
			break
		}
		if _, ok := projections.DecisionRecordOf(ev); !ok {
			continue
		}
		if ev.Seq == last.Seq {
			n++
		}
		if ev.Seq > last.Seq || n > last.N {
			return true, nil
		}
	}
	return false, nil
}
