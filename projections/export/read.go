package export

import (
	"context"
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
)

// DefaultBatch is the number of stream messages (commits) read before the
// records they hold are handed to the sink in one Export call.
const DefaultBatch = 256

// Range exports the records of every commit from stream sequence from
// (inclusive; 0 or 1 = the beginning) up to the stream's current end, in
// batches of up to batch commits (≤ 0 means [DefaultBatch]), then returns
// the sequence of the last message read (0 when none). A stored message
// that cannot be decoded holds no record fledger wrote: it is skipped (a
// quarantined message, see [RangeReport] to be told about it), as are
// missing sequences. A file sink ([Holder]) holding a record the ledger
// does not is refused first (an error wrapping [ErrForeignOutput]); one
// written from the archived period the stream continues ([Continued]) gets
// the stream's records after the archive's.
func Range(ctx context.Context, st events.Store, from uint64, sink Sink, batch int) (uint64, error) {
	return RangeReport(ctx, st, from, sink, batch, RangeNotes{})
}

// RangeNotes are what [RangeReport] tells its caller about as it goes.
type RangeNotes struct {
	// Quarantined, when set, is called with each message skipped because
	// it cannot be decoded, and each run of missing sequences (a
	// *events.DecodeError wrapping events.ErrGap).
	Quarantined func(*events.DecodeError)
	// Continued, when set, is called when a [Holder] sink's output was
	// written from the archived period the stream continues ([Continued]):
	// its records follow the archive's from the stream's first sequence.
	Continued func(Continued)
}

// RangeReport is [Range] that tells notes what it skipped and continued.
func RangeReport(ctx context.Context, st events.Store, from uint64, sink Sink, batch int, notes RangeNotes) (uint64, error) {
	if batch <= 0 {
		batch = DefaultBatch
	}
	cont, continued, err := checkHeld(ctx, st, sink)
	if err != nil {
		return 0, err
	}
	if continued && notes.Continued != nil {
		notes.Continued(cont)
	}
	quarantined := notes.Quarantined
	var (
		pending []events.Event
		commits int
		seq     uint64
		last    uint64
	)
	flush := func() error {
		recs := Records(pending)
		pending, commits = pending[:0], 0
		if len(recs) == 0 {
			return nil
		}
		return sink.Export(ctx, recs)
	}
	for ev, err := range st.Read(ctx, from) {
		if err != nil {
			var de *events.DecodeError
			if errors.As(err, &de) && de.Seq != 0 {
				if quarantined != nil {
					quarantined(de)
				}
				last = max(last, de.Seq, de.Through)
				continue
			}
			return last, fmt.Errorf("export: read: %w", err)
		}
		if ev.Seq != seq {
			if commits == batch {
				if err := flush(); err != nil {
					return last, err
				}
			}
			seq = ev.Seq
			commits++
		}
		last = ev.Seq
		pending = append(pending, ev)
	}
	if err := flush(); err != nil {
		return last, err
	}
	return last, nil
}
