package events

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RawBenchStream is the stream (subjects bench.>) the dependency
// measurements of `fledger bench` publish on, beside fledger's own on the
// same server.
const RawBenchStream = "BENCH"

// RawBench measures the dependency itself for `fledger bench`: nats.go's
// JetStream publishes and reads on the server of a store, without the
// store on the path, so the benchmark can set fledger's figures beside the
// limits of what it is built on. Nothing but the benchmark uses it: its
// publishes go to [RawBenchStream], except [RawBench.PublishCommitAsync],
// which fills fledger's stream with generated commits.
type RawBench struct {
	js     jetstream.JetStream
	failed atomic.Int64
	first  atomic.Value // the first failed async publish's error
}

// NewRawBench opens a JetStream context on st's connection with an async
// publish window of window messages. With fresh, the [RawBenchStream] is
// (re)created empty (file storage, one replica). A store without NATS
// gives an error wrapping [ErrNoConnection].
func NewRawBench(ctx context.Context, st Store, window int, fresh bool) (*RawBench, error) {
	s, ok := st.(*store)
	if !ok {
		return nil, fmt.Errorf("events: raw bench: %w", ErrNoConnection)
	}
	b := &RawBench{}
	js, err := jetstream.New(s.nc, jetstream.WithPublishAsyncMaxPending(window),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			if b.failed.Add(1) == 1 {
				b.first.Store(err)
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("events: raw bench: %w", err)
	}
	b.js = js
	if fresh {
		_ = js.DeleteStream(ctx, RawBenchStream)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: RawBenchStream, Subjects: []string{"bench.>"},
			Storage: jetstream.FileStorage, Replicas: 1}); err != nil {
			return nil, fmt.Errorf("events: raw bench: create stream %s: %w", RawBenchStream, err)
		}
	}
	return b, nil
}

// Publish publishes body on subject (under bench.>) and waits for its ack.
func (b *RawBench) Publish(ctx context.Context, subject string, body []byte) error {
	_, err := b.js.Publish(ctx, subject, body)
	return err
}

// PublishAsync publishes body on subject (under bench.>) without waiting
// for the ack; a full window waits up to a minute for room, so acks that
// each wait for an fsync never time it out.
func (b *RawBench) PublishAsync(subject string, body []byte) error {
	_, err := b.js.PublishAsync(subject, body, jetstream.WithStallWait(time.Minute))
	return err
}

// PublishCommitAsync publishes a commit body into fledger's stream under
// subject with the headers the store sets (message id, expected stream),
// without waiting for the ack: the fast way to write a large generated
// ledger. It is stored unchecked: body must be a commit the store would
// have written.
func (b *RawBench) PublishCommitAsync(subject, msgID string, body []byte) error {
	m := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	m.Header.Set(jetstream.ExpectedStreamHeader, StreamName)
	_, err := b.js.PublishMsgAsync(m, jetstream.WithStallWait(time.Minute))
	return err
}

// AsyncComplete is closed when every async publish so far is answered.
func (b *RawBench) AsyncComplete() <-chan struct{} { return b.js.PublishAsyncComplete() }

// AsyncPending is how many async publishes are not answered yet.
func (b *RawBench) AsyncPending() int { return b.js.PublishAsyncPending() }

// Failed is how many async publishes failed, and the first one's error.
func (b *RawBench) Failed() (int64, error) {
	n := b.failed.Load()
	err, _ := b.first.Load().(error)
	return n, err
}

// RawReader reads fledger's stream with an ordered consumer, bytes only,
// pulling as many messages at a time as the store's own reads do: the
// dependency's read rate with the settings fledger reads with.
type RawReader struct {
	it   jetstream.MessagesContext
	s    *store
	cons jetstream.Consumer
}

// NewRawReader starts an ordered consumer over fledger's stream on st's
// server from the beginning. Stop it when done.
func NewRawReader(ctx context.Context, st Store) (*RawReader, error) {
	s, ok := st.(*store)
	if !ok {
		return nil, fmt.Errorf("events: raw read: %w", ErrNoConnection)
	}
	c, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("events: raw read: %w", err)
	}
	it, err := c.Messages(jetstream.PullMaxMessages(readBatch))
	if err != nil {
		return nil, fmt.Errorf("events: raw read: %w", err)
	}
	return &RawReader{it: it, s: s, cons: c}, nil
}

// Next waits for the next message and returns its body as stored.
func (r *RawReader) Next() ([]byte, error) {
	m, err := r.it.Next()
	if err != nil {
		return nil, fmt.Errorf("events: raw read: %w", err)
	}
	return m.Data(), nil
}

// NextSeq is [RawReader.Next] with the message's stream sequence.
func (r *RawReader) NextSeq() (seq uint64, data []byte, err error) {
	seq, _, data, err = r.NextMsg()
	return seq, data, err
}

// NextMsg is [RawReader.Next] with the message's stream sequence and
// subject: what [Registry.DecodeCommit] takes.
func (r *RawReader) NextMsg() (seq uint64, subject string, data []byte, err error) {
	m, err := r.it.Next()
	if err != nil {
		return 0, "", nil, fmt.Errorf("events: raw read: %w", err)
	}
	meta, err := m.Metadata()
	if err != nil {
		return 0, "", nil, fmt.Errorf("events: raw read: %w", err)
	}
	return meta.Sequence.Stream, m.Subject(), m.Data(), nil
}

// Stop ends the reader's consumer.
func (r *RawReader) Stop() {
	r.it.Stop()
	r.s.dropOrdered(r.cons)
}

// SettleDuplicates makes the server forget the message ids of fledger's
// stream's duplicate window now, as it does by itself once the window has
// passed since the last publish. The benchmark fills a stream in seconds
// and then reads it at once; without this, the ids of every commit it
// published (≈ 48 MiB of pointer-dense live heap for a million events)
// would be in the process's live heap through every read, which a ledger
// rebuilt days after its writes never has.
//
// The window is set to 100 ms (the least the server takes), then to
// 200 ms, then back. One change is not enough: the server restarts its
// purge timer before it sets the new window, so the purge that change
// triggers can run with the old window, drop nothing, and sleep out the
// rest of it (≈ 2 min). The second change triggers a purge that runs
// with a window of 100 or 200 ms, whichever it sees, and every id of a
// fill that ended before the first change is older than both.
//
// Only for the benchmark's own servers: it rewrites the stream's
// configuration twice, and for those 600 ms a re-sent append on a live
// ledger would be stored twice.
func (b *RawBench) SettleDuplicates(ctx context.Context) error {
	s, err := b.js.Stream(ctx, StreamName)
	if err != nil {
		return fmt.Errorf("events: raw bench: settle duplicates: %w", err)
	}
	cfg := s.CachedInfo().Config
	want := cfg.Duplicates
	settle := func() error {
		for _, w := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
			cfg.Duplicates = w
			if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
				return fmt.Errorf("events: raw bench: settle duplicates: window %v: %w", w, err)
			}
			select {
			case <-time.After(3 * w):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	err = settle()
	cfg.Duplicates = want
	if _, rerr := b.js.UpdateStream(context.WithoutCancel(ctx), cfg); rerr != nil {
		return fmt.Errorf("events: raw bench: settle duplicates: restore the window (%v): %w", want, rerr)
	}
	return err
}
