package export

import (
	"context"
	"fmt"

	"github.com/fledger/fledger/events"
)

// DefaultBatch is the number of stream messages (commits) read before the
// records they hold are handed to the sink in one Export call.
const DefaultBatch = 256

// Range exports the records of every commit from stream sequence from
// (inclusive; 0 or 1 = the beginning) up to the stream's current end, in
// batches of up to batch commits (≤ 0 means [DefaultBatch]), then returns
// the sequence of the last message read (0 when none). A message that
// cannot be decoded stops the export with its *events.DecodeError: a
// record must never be skipped silently.
func Range(ctx context.Context, st events.Store, from uint64, sink Sink, batch int) (uint64, error) {
	if batch <= 0 {
		batch = DefaultBatch
	}
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
