package export

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
)

// DefaultConsumer is the durable consumer name [Follow] uses when
// [FollowConfig].Consumer is empty.
const DefaultConsumer = "fledger-export-jsonl"

// FollowConfig tunes [Follow]. The zero value is usable.
type FollowConfig struct {
	// Consumer is the durable JetStream consumer's name; default
	// [DefaultConsumer]. Two exporters to different destinations need two
	// names: each name has one position on the stream.
	Consumer string
	// Since is the first stream sequence a new consumer delivers (0 or 1 =
	// the beginning). It is used only when the consumer is created; an
	// existing consumer resumes at its own position.
	Since uint64
	// Batch is the most messages (commits) handed to the sink in one Export
	// and the consumer's MaxAckPending; default [DefaultBatch].
	Batch int
	// AckWait is how long the server waits for an acknowledgement before it
	// redelivers a message; default 30 s. While the sink works on a batch
	// (e.g. an OTLP export retrying), Follow tells the server the batch is
	// in progress every AckWait/3, so a slow sink causes no redelivery; a
	// killed exporter's unacknowledged batch is redelivered after AckWait.
	AckWait time.Duration
	// Registry decodes stored commits; default events.NewCatalogRegistry().
	Registry *events.Registry
	// RetryInitial and RetryMax bound the delay between attempts to deliver
	// a batch the sink refused: doubling from RetryInitial (default 1 s) up
	// to RetryMax (default 30 s). Follow retries until the sink accepts the
	// batch or ctx is done; records are never skipped.
	RetryInitial, RetryMax time.Duration
	// OnError, when set, is told about every sink error before the retry
	// and every failed acknowledgement.
	OnError func(error)
	// OnQuarantine, when set, is told about each stored message that
	// cannot be decoded (it holds no record fledger wrote: it is
	// acknowledged with its batch and skipped) and each run of sequences
	// missing between two delivered messages (a *events.DecodeError
	// wrapping events.ErrGap).
	OnQuarantine func(*events.DecodeError)
	// OnBatch, when set, is called after each batch was delivered and
	// acknowledged, with the last stream sequence of the batch and the
	// number of records it held.
	OnBatch func(lastSeq uint64, records int)
}

func (c *FollowConfig) setDefaults() {
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.Registry == nil {
		c.Registry = events.NewCatalogRegistry()
	}
	if c.RetryInitial <= 0 {
		c.RetryInitial = time.Second
	}
	if c.RetryMax < c.RetryInitial {
		c.RetryMax = max(30*time.Second, c.RetryInitial)
	}
}

// nextWait bounds one wait for the next message, so a cancelled ctx is
// noticed promptly even if the pull request misses it.
const nextWait = 5 * time.Second

// Follow tails the stream through a durable JetStream pull consumer (filter
// fledger.>, explicit acknowledgements, MaxAckPending = Batch) and hands
// the records of each batch of commits to sink; only after sink.Export
// returned nil are the batch's messages acknowledged, one by one, in order,
// each confirmed by the server. A commit without FallbackStepped events is
// acknowledged too, so the consumer's position always advances; so is a
// stored message that cannot be decoded (not a fledger commit: it holds no
// record), reported to OnQuarantine. It returns nil when ctx is done
// (after acknowledging a batch already delivered, and handing back one
// not delivered), or an error: the consumer cannot be made.
//
// Guarantee: every record is delivered at least once and in order; a
// record is delivered twice only when the exporter dies after the sink
// delivered it and before the acknowledgement reached the server, and a
// [JSONL] file sink drops such duplicates (docs/exporters.md).
func Follow(ctx context.Context, st events.Store, sink Sink, cfg FollowConfig) error {
	cfg.setDefaults()
	cons, err := durable(ctx, st.Conn(), &cfg)
	if err != nil {
		return err
	}
	var done uint64 // last sequence delivered and acknowledged by this run
	var seen uint64 // last sequence fetched (0 = none yet), for gaps
	for ctx.Err() == nil {
		msgs, err := fetch(ctx, cons, cfg.Batch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		var (
			evs  []events.Event
			keep []jetstream.Msg
			last uint64
		)
		for _, m := range msgs {
			meta, err := m.Metadata()
			if err != nil {
				nakAll(msgs)
				return fmt.Errorf("export: follow: %w", err)
			}
			seq := meta.Sequence.Stream
			if seq <= done { // redelivered after a lost ack: already delivered
				ack(ctx, m, &cfg)
				continue
			}
			if seen != 0 && seq > seen+1 && cfg.OnQuarantine != nil {
				cfg.OnQuarantine(&events.DecodeError{Seq: seen + 1, Through: seq - 1, Index: -1, Err: events.ErrGap})
			}
			seen = max(seen, seq)
			dec, err := cfg.Registry.DecodeCommit(m.Data(), seq, m.Subject())
			if err != nil {
				// Not a fledger commit: no record to export. It is
				// acknowledged with the batch, so the position advances.
				var de *events.DecodeError
				if errors.As(err, &de) && cfg.OnQuarantine != nil {
					cfg.OnQuarantine(de)
				}
				dec = nil
			}
			evs = append(evs, dec...)
			keep = append(keep, m)
			last = seq
		}
		if len(keep) == 0 {
			continue
		}
		recs := Records(evs)
		if !deliver(ctx, sink, recs, keep, &cfg) {
			nakAll(keep)
			return nil
		}
		for _, m := range keep {
			ack(ctx, m, &cfg)
		}
		done = last
		if cfg.OnBatch != nil {
			cfg.OnBatch(last, len(recs))
		}
	}
	return nil
}

// durable returns the durable consumer, creating it at cfg.Since.
func durable(ctx context.Context, nc *nats.Conn, cfg *FollowConfig) (jetstream.Consumer, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("export: follow: %w", err)
	}
	stream, err := js.Stream(ctx, events.StreamName)
	if err != nil {
		return nil, fmt.Errorf("export: follow: stream %s: %w", events.StreamName, err)
	}
	cons, err := stream.Consumer(ctx, cfg.Consumer)
	if err == nil {
		ci := cons.CachedInfo().Config
		if ci.MaxAckPending != cfg.Batch || ci.AckWait != cfg.AckWait {
			ci.MaxAckPending, ci.AckWait = cfg.Batch, cfg.AckWait
			if cons, err = stream.UpdateConsumer(ctx, ci); err != nil {
				return nil, fmt.Errorf("export: follow: update consumer %s: %w", cfg.Consumer, err)
			}
		}
		return cons, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("export: follow: consumer %s: %w", cfg.Consumer, err)
	}
	cc := jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   "fledger export: model_fallback_decision records",
		FilterSubject: "fledger.>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxAckPending: cfg.Batch,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if cfg.Since > 1 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, cfg.Since
	}
	cons, err = stream.CreateConsumer(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("export: follow: create consumer %s: %w", cfg.Consumer, err)
	}
	return cons, nil
}

// fetch waits for the next message (up to nextWait; none is not an error)
// and takes the ones already waiting behind it, up to batch in all.
func fetch(ctx context.Context, cons jetstream.Consumer, batch int) ([]jetstream.Msg, error) {
	wctx, cancel := context.WithTimeout(ctx, nextWait)
	m, err := cons.Next(jetstream.FetchContext(wctx))
	cancel()
	if err != nil {
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
			return nil, nil
		}
		return nil, fmt.Errorf("export: follow: fetch: %w", err)
	}
	msgs := []jetstream.Msg{m}
	if batch > 1 {
		mb, err := cons.FetchNoWait(batch - 1)
		if err != nil {
			nakAll(msgs)
			return nil, fmt.Errorf("export: follow: fetch: %w", err)
		}
		for m := range mb.Messages() {
			msgs = append(msgs, m)
		}
		if err := mb.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			nakAll(msgs)
			return nil, fmt.Errorf("export: follow: fetch: %w", err)
		}
	}
	return msgs, nil
}

// deliver hands recs to the sink until it accepts them (true) or ctx is
// done (false), telling the server the batch is in progress meanwhile.
func deliver(ctx context.Context, sink Sink, recs []Record, msgs []jetstream.Msg, cfg *FollowConfig) bool {
	if len(recs) == 0 {
		return true
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				for _, m := range msgs {
					_ = m.InProgress()
				}
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	delay := cfg.RetryInitial
	for {
		err := sink.Export(ctx, recs)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if cfg.OnError != nil {
			cfg.OnError(fmt.Errorf("export: sink: %w (retrying in %s)", err, delay))
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
		}
		delay = min(delay*2, cfg.RetryMax)
	}
}

// ack acknowledges m and waits for the server's confirmation, even when
// ctx is already done: the record was delivered, so its ack must be tried.
func ack(ctx context.Context, m jetstream.Msg, cfg *FollowConfig) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil && cfg.OnError != nil {
		cfg.OnError(fmt.Errorf("export: ack: %w", err))
	}
}

// nakAll hands msgs back for immediate redelivery (to this run or the
// next), so a restart does not wait for AckWait.
func nakAll(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.Nak()
	}
}
