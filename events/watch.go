package events

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// watched is one result of an ordered consumer's Next.
type watched struct {
	m   jetstream.Msg
	err error
}

// Watch implements [Store]: an ordered consumer from from (the stream's
// first sequence when from is before it, [store.readStart]), its messages
// decoded on the caller's goroutine. The consumer's Next runs on a
// goroutine of its own, so ctx ending ends the iteration at once even
// while the client recreates the consumer (a lost server: the client
// retries without looking at ctx); that goroutine and the consumer stop
// in the background.
func (s *store) Watch(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.isClosed() {
			yield(Event{}, ErrClosed)
			return
		}
		// Before a stream continuing an archived one's first sequence lies
		// the archive, not a gap: the read starts at the first sequence,
		// as Read, ReadRange and Follow do.
		from = s.readStart(from)
		cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
			DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
			OptStartSeq:   from,
		})
		if err != nil {
			yield(Event{}, fmt.Errorf("events: watch: %w", err))
			return
		}
		it, err := cons.Messages(append([]jetstream.PullMessagesOpt{jetstream.PullMaxMessages(readBatch)}, followPullOpts()...)...)
		if err != nil {
			yield(Event{}, fmt.Errorf("events: watch: %w", err))
			return
		}
		wctx, cancel := context.WithCancel(ctx)
		msgs := make(chan watched)
		go func() {
			for {
				m, err := it.Next(jetstream.NextContext(wctx))
				select {
				case msgs <- watched{m, err}:
				case <-wctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
		// Stop marks the iterator stopped at once, which also ends a Next
		// that is recreating the consumer (its retries check it); Stop
		// itself may wait for that recreation, so it runs on its own.
		defer func() {
			cancel()
			s.stopAndDrop(it.Stop, cons)
		}()
		next := from // the sequence expected: a jump is a gap (deletes are denied)
		// The stream's identity is checked as a follower's is (follow.go):
		// the ordered consumer makes itself again on a stream of the same
		// name created since, and watching must end there.
		identity := time.NewTicker(followIdentityCheck)
		defer identity.Stop()
		for {
			var w watched
			select {
			case <-ctx.Done():
				return
			case <-s.closed:
				return // as when Next fails on the closed connection
			case <-identity.C:
				if err := s.replacedNow(ctx); err != nil {
					yield(Event{}, fmt.Errorf("events: watch: %w", err))
					return
				}
				continue
			case w = <-msgs:
			}
			if w.err != nil {
				if ctx.Err() != nil || s.isClosed() {
					return
				}
				yield(Event{}, fmt.Errorf("events: watch: %w", w.err))
				return
			}
			m := w.m
			meta, err := m.Metadata()
			if err != nil {
				if !yield(Event{}, fmt.Errorf("events: watch: %w", err)) {
					return
				}
				continue
			}
			if meta.Sequence.Consumer == 1 {
				// A consumer made (again) by the client: possibly on a
				// stream of the same name created since (follow.go).
				if err := s.replacedNow(ctx); err != nil {
					yield(Event{}, fmt.Errorf("events: watch: %w", err))
					return
				}
			}
			seq := meta.Sequence.Stream
			if seq > next {
				if !yield(Event{Seq: next, Index: -1}, &DecodeError{Seq: next, Through: seq - 1, Index: -1, Err: ErrGap}) {
					return
				}
			}
			next = max(next, seq+1)
			evs, err := s.reg.DecodeCommit(m.Data(), seq, m.Subject())
			if err != nil {
				if !yield(Event{Seq: seq, Index: -1}, err) {
					return
				}
				continue
			}
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
		}
	}
}
