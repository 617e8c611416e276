package projections

import (
	"context"
	"iter"

	"github.com/fledger/fledger/events"
)

// pipeBatch is how many read results the reader goroutine hands over at a
// time, and pipeDepth how many such batches may wait.
const (
	pipeBatch = 256
	pipeDepth = 16
)

// RangeSource is a [Source] with a faster read of a bounded range:
// [events.Store]'s ReadRange (an ordered consumer instead of direct
// gets). ReadRange(ctx, from, to) yields what Read(ctx, from) yields up to
// sequence to (0: the stream's end when the read starts).
type RangeSource interface {
	Source
	ReadRange(ctx context.Context, from, to uint64) iter.Seq2[events.Event, error]
}

// rangeMinMsgs is the shortest known range read with ReadRange: a
// shorter one (a live catch-up of a few commits) is cheaper with Read's
// direct gets than with a consumer created for it.
const rangeMinMsgs = 1024

// readRange reads src from from through to (0 = its end): with ReadRange
// when src has it and the range is known to be long, else Read (the
// catch-up stops at to itself).
func readRange(ctx context.Context, src Source, from, to uint64) iter.Seq2[events.Event, error] {
	if r, ok := src.(RangeSource); ok && to >= from+rangeMinMsgs {
		return r.ReadRange(ctx, from, to)
	}
	return src.Read(ctx, from)
}

type readResult struct {
	ev  events.Event
	err error
}

// pipelined reads src on its own goroutine, so fetching and decoding the
// next events overlaps folding and writing SQLite (decoding is the largest
// cost of a rebuild, docs/performance.md). It yields src's results in
// order. stop must be called when done: it ends the reader and waits for
// it.
func pipelined(ctx context.Context, src Source, from, to uint64) (iter.Seq2[events.Event, error], func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan []readResult, pipeDepth)
	// free takes the batches back once yielded: a rebuild of 1 M events
	// would otherwise allocate ≈ 300 MB of them for the GC to collect.
	free := make(chan []readResult, pipeDepth+2)
	newBuf := func() []readResult {
		select {
		case b := <-free:
			return b
		default:
			return make([]readResult, 0, pipeBatch)
		}
	}
	go func() {
		defer close(ch)
		buf := newBuf()
		for ev, err := range readRange(ctx, src, from, to) {
			buf = append(buf, readResult{ev, err})
			if len(buf) == pipeBatch {
				select {
				case ch <- buf:
				case <-ctx.Done():
					return
				}
				buf = newBuf()
			}
		}
		if len(buf) > 0 {
			select {
			case ch <- buf:
			case <-ctx.Done():
			}
		}
	}()
	seq := func(yield func(events.Event, error) bool) {
		for b := range ch {
			for i := range b {
				if !yield(b[i].ev, b[i].err) {
					return
				}
			}
			clear(b) // drop the payloads before the batch waits for reuse
			select {
			case free <- b[:0]:
			default:
			}
		}
	}
	stop := func() {
		cancel()
		for range ch { // wait for the reader to finish
		}
	}
	return seq, stop
}
