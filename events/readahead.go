package events

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/nats-io/nats.go"
)

// Decoding is most of the cost of reading the stream, so Read and
// ReadSubject decode ahead: one goroutine fetches messages with scan
// (batched direct gets, the next batch requested as soon as the previous
// one is received) and cuts them into chunks, GOMAXPROCS workers decode
// the chunks in parallel, and the caller's goroutine takes the chunks in
// stream order. At most readAheadChunks chunks per worker are in flight.

const (
	// chunkMsgs is how many messages a worker decodes at a time: enough to
	// make the hand-over cheap next to decoding, few enough to start soon.
	chunkMsgs = 32
	// readAheadChunks bounds the chunks fetched or decoded but not yet
	// consumed, per worker.
	readAheadChunks = 4
	// eventsPerChunk is the first capacity of a chunk's slice of events:
	// three per message, about what a turn's commits hold (a chunk that
	// needs more grows it, and keeps it when reused).
	eventsPerChunk = 3 * chunkMsgs
)

// decodedMsg is one message's decoded events, or its *DecodeError.
type decodedMsg struct {
	seq     uint64
	subject string
	data    []byte
	evs     []Event
	err     error
}

// decodeChunk is a run of consecutive messages decoded by one worker;
// done is closed once every message of it is decoded, or once the worker
// skipped it (skipped: the context was done). events holds the events of
// all its messages (each message's evs is a part of it).
type decodeChunk struct {
	msgs    []decodedMsg
	events  []Event
	skipped bool
	done    chan struct{}
}

// chunkPool holds the chunks whose events the consumer has yielded: their
// slices are reused (cleared) by later chunks. A yielded event is a copy,
// and no consumer keeps a message's evs (eventYielder, readSubject), so
// nothing refers to them.
var chunkPool = sync.Pool{New: func() any {
	return &decodeChunk{msgs: make([]decodedMsg, 0, chunkMsgs), events: make([]Event, 0, eventsPerChunk)}
}}

func newDecodeChunk() *decodeChunk {
	c := chunkPool.Get().(*decodeChunk)
	c.skipped, c.done = false, make(chan struct{})
	return c
}

// release clears c and puts it back for reuse: only once its messages
// were decoded and yielded.
func (c *decodeChunk) release() {
	clear(c.msgs)
	clear(c.events)
	c.msgs, c.events, c.done = c.msgs[:0], c.events[:0], nil
	chunkPool.Put(c)
}

// fetchFunc fetches messages in stream order and calls fn with each one
// (its data is not modified afterwards) until fn returns false or the
// read ends: [store.scan]'s batched direct gets, or [store.scanOrdered]'s
// ordered consumer.
type fetchFunc func(ctx context.Context, fn func(seq uint64, subject string, data []byte) bool) error

// readDecoded reads the messages with sequence >= from matching filter
// like scan and calls fn with each one decoded, in stream order, until fn
// returns false or no message is pending. It returns scan's error (nil
// when fn stopped the read).
//
// Reading the whole stream (filter ""), a jump in sequences is a gap: the
// stream denies deletes, so fn gets a *DecodeError wrapping ErrGap naming
// the missing run before the message after it.
func (s *store) readDecoded(ctx context.Context, from uint64, filter string, fn func(*decodedMsg) bool) error {
	if filter == "" {
		fn = gapChecked(s.readStart(from), fn)
	}
	return s.decodeAhead(ctx, func(ctx context.Context, f func(uint64, string, []byte) bool) error {
		return s.scan(ctx, from, filter, readBatch, func(seq uint64, subj string, m *nats.Msg) bool {
			return f(seq, subj, m.Data)
		})
	}, fn)
}

// decodeAhead calls fn with each message fetch yields, decoded, in stream
// order, decoding on GOMAXPROCS workers ahead of fn (see the top of this
// file). It returns fetch's error (nil when fn stopped the read).
func (s *store) decodeAhead(ctx context.Context, fetch fetchFunc, fn func(*decodedMsg) bool) error {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 {
		return fetch(ctx, func(seq uint64, subj string, data []byte) bool {
			// data is the NATS client's message, dropped after this call.
			d := decodedMsg{seq: seq}
			_, d.evs, d.err = s.reg.decodeOwned(nil, data, seq, subj)
			return fn(&d)
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *decodeChunk, workers*readAheadChunks)
	ordered := make(chan *decodeChunk, workers*readAheadChunks)

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { s.decodeChunks(ctx, work) })
	}

	// The fetcher. fetchErr is read after ordered is closed.
	var fetchErr error
	go func() {
		defer close(ordered)
		defer close(work)
		cur := newDecodeChunk()
		// dispatch hands cur to the workers and the consumer, in that
		// order, so every chunk the consumer waits for is being decoded.
		// cur is replaced before the sends, so a chunk is handed out at
		// most once even when a send gives up (a worker closes its done).
		dispatch := func() bool {
			c := cur
			cur = newDecodeChunk()
			select {
			case work <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case ordered <- c:
			case <-ctx.Done():
				return false
			}
			return true
		}
		var last uint64
		err := fetch(ctx, func(seq uint64, subj string, data []byte) bool {
			last = seq
			cur.msgs = append(cur.msgs, decodedMsg{seq: seq, subject: subj, data: data})
			return len(cur.msgs) < chunkMsgs || dispatch()
		})
		if err == nil && len(cur.msgs) > 0 {
			dispatch()
		}
		if err == nil && ctx.Err() != nil {
			// Stopped by the caller's context rather than by the end of the
			// stream: report it as scan would have.
			err = fmt.Errorf("events: read after sequence %d: %w", last, ctx.Err())
		}
		fetchErr = err
	}()

	// The consumer: fn runs on the caller's goroutine, in stream order.
	stopped := consumeInOrder(ordered, fn, cancel)
	wg.Wait()
	if stopped {
		return nil
	}
	return fetchErr
}

// decodeChunks is one of readDecoded's workers: it decodes each chunk it
// takes from work in place (dropping the raw data) and closes its done,
// or only closes it, marked skipped, once ctx is done.
func (s *store) decodeChunks(ctx context.Context, work <-chan *decodeChunk) {
	for c := range work {
		if c.skipped = ctx.Err() != nil; !c.skipped {
			// The fetcher's data is the NATS client's copy of the message,
			// dropped here: the events may share it. The chunk's events
			// share one slice (most commits hold a few events).
			all := c.events[:0]
			for i := range c.msgs {
				d := &c.msgs[i]
				all, d.evs, d.err = s.reg.decodeOwned(all, d.data, d.seq, d.subject)
				d.data = nil
			}
			c.events = all
		}
		close(c.done)
	}
}

// consumeInOrder is readDecoded's consumer: it takes the chunks from
// ordered in stream order, waits for each to be decoded and calls fn with
// its messages. When fn returns false it cancels the read (cancel) and
// reports stopped; a skipped chunk means the caller's context is done,
// which the fetcher reports. Either way it drains ordered until the
// fetcher closes it.
func consumeInOrder(ordered <-chan *decodeChunk, fn func(*decodedMsg) bool, cancel context.CancelFunc) (stopped bool) {
	aborted := false
	for c := range ordered {
		if stopped || aborted {
			continue // drain until the fetcher has gone
		}
		<-c.done
		if c.skipped {
			// The caller's context is done; the fetcher reports it.
			aborted = true
			continue
		}
		for i := range c.msgs {
			if !fn(&c.msgs[i]) {
				stopped = true
				cancel()
				break
			}
		}
		c.release()
	}
	return stopped
}

// gapChecked wraps fn so that a message whose sequence is past next (the
// sequence expected) is preceded by the gap's *DecodeError.
func gapChecked(next uint64, fn func(*decodedMsg) bool) func(*decodedMsg) bool {
	return func(d *decodedMsg) bool {
		if d.seq > next {
			g := decodedMsg{seq: next, err: &DecodeError{Seq: next, Through: d.seq - 1, Index: -1, Err: ErrGap}}
			if !fn(&g) {
				return false
			}
		}
		next = d.seq + 1
		return fn(d)
	}
}
