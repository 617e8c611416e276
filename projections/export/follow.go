package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fledger/fledger/events"
)

// DefaultConsumer is the durable consumer name [Follow] uses when
// [FollowConfig].Consumer is empty.
const DefaultConsumer = "fledger-export-jsonl"

// FileConsumer is the durable consumer name for a followed export to the
// file at path: [DefaultConsumer], "-", and the first 8 hex digits of the
// SHA-256 of the file's absolute, cleaned path. Each file decides where
// its export resumes and needs a consumer of its own, so two files get
// two names (the same file, named by any relative path, one). An exporter
// holds the file's lock for as long as it runs, so on one host a file's
// consumer has one reader ([FollowConfig].Owned); the same path on two
// hosts of one cluster shares the name, and the second exporter finds
// the first at work (a pull request waiting) and is refused, or, moved
// under a busy first, the first stops with events.ErrCursorReplaced.
func FileConsumer(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("export: consumer for %s: %w", path, err)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return DefaultConsumer + "-" + hex.EncodeToString(sum[:4]), nil
}

// FollowConfig tunes [Follow]. The zero value is usable.
type FollowConfig struct {
	// Consumer is the durable JetStream consumer's name; default
	// [DefaultConsumer]. Two exporters to different destinations need two
	// names: each name has one position on the stream ([FileConsumer]
	// gives each file its own).
	Consumer string
	// Owned says this exporter alone reads Consumer on this host: a file
	// export under the file's own name ([FileConsumer]) while it holds the
	// file's lock. The consumer is then kept or moved for the file after
	// one look for a reader parked on it (another host's exporter of the
	// same path), without waiting out deliveries within their AckWait
	// (events.CursorOptions.Owned): a restart after a crash writes at
	// once. A consumer named with --consumer may be shared: not owned.
	Owned bool
	// Since is the first stream sequence a new consumer delivers (0 or 1 =
	// the beginning). It is used only when the consumer is created; an
	// existing consumer resumes at its own position. For a [Holder] sink
	// (a file) it is where an output holding no record starts, whatever
	// the consumer (see [Follow]).
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
	// Registry is the registry the stored commits are decoded with; default
	// events.NewCatalogRegistry(). The store's cursor decodes them, with
	// the registry the store was opened with ([events.WithRegistry]):
	// Registry must be that one.
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
	// OnContinue, when set, is told when a [Holder] sink's output was
	// written from the archived period a stream continues (its last
	// record is before the stream's first sequence): the export goes on
	// at the stream's first sequence.
	OnContinue func(Continued)
	// OnMove, when set, is told when the consumer stood elsewhere than a
	// [Holder] sink's output resumes and was moved: where it stood and the
	// first sequence it now delivers.
	OnMove func(stood events.CursorState, to uint64)
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

// Follow tails the stream through the store's durable cursor named
// Consumer ([events.Store].Cursor: on JetStream a durable pull consumer,
// filter fledger.>, explicit acknowledgements, MaxAckPending = Batch) and hands
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
//
// Which decides where the export resumes: for a [Holder] sink whose
// output knows what it holds (a JSONL file), the output — it gets every
// record after its last one (from Since when it holds none), whatever
// position the consumer holds: a consumer that stands elsewhere (another
// file's export advanced it, or it holds unacknowledged deliveries) is
// moved there (OnMove), and one that another reader waits on is refused
// with an error wrapping [events.ErrCursorInUse]; an output holding a
// record the ledger does not (another ledger's file) is refused with an
// error wrapping [ErrForeignOutput]; an output whose last record is
// before the stream's first sequence (the archived period of a stream
// continuing one, [Continued]: OnContinue) gets every record from the
// stream's first sequence. For any other sink
// (stdout, OTLP) the consumer's position decides.
func Follow(ctx context.Context, st events.Store, sink Sink, cfg FollowConfig) error {
	cfg.setDefaults()
	cont, continued, err := checkHeld(ctx, st, sink)
	if err != nil {
		return err
	}
	opts := events.CursorOptions{Name: cfg.Consumer, Since: cfg.Since, Batch: cfg.Batch, AckWait: cfg.AckWait, Owned: cfg.Owned}
	var moved *events.CursorState
	if h, ok := sink.(Holder); ok {
		if last, ok := h.Holds(); ok {
			opts.Since = resumeFrom(last, cfg.Since)
			if continued {
				opts.Since = max(opts.Since, cont.First)
			}
			opts.Keep = func(ctx context.Context, cs events.CursorState) (bool, error) {
				keep, err := keepConsumer(ctx, st, last, opts.Since, cs)
				if err == nil && !keep {
					moved = &cs
				}
				return keep, err
			}
		}
	}
	cur, err := st.Cursor(ctx, opts)
	if err != nil {
		return fmt.Errorf("export: follow: %w", err)
	}
	defer func() { _ = cur.Close() }()
	if continued && cfg.OnContinue != nil {
		cfg.OnContinue(cont)
	}
	if moved != nil && cfg.OnMove != nil {
		cfg.OnMove(*moved, opts.Since)
	}
	var done uint64 // last sequence delivered and acknowledged by this run
	for ctx.Err() == nil {
		ds, err := cur.Fetch(ctx, cfg.Batch, nextWait)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("export: follow: %w", err)
		}
		var (
			evs  []events.Event
			keep []events.Delivery
			last uint64
		)
		for _, d := range ds {
			if d.Err != nil && d.Err.Gap() {
				// A run of sequences missing between two delivered
				// messages: nothing to deliver or acknowledge.
				if cfg.OnQuarantine != nil {
					cfg.OnQuarantine(d.Err)
				}
				continue
			}
			if d.Seq <= done { // redelivered after a lost ack: already delivered
				ack(ctx, d, &cfg)
				continue
			}
			if d.Err != nil && cfg.OnQuarantine != nil {
				// Not a fledger commit: no record to export. It is
				// acknowledged with the batch, so the position advances.
				cfg.OnQuarantine(d.Err)
			}
			evs = append(evs, d.Events...)
			keep = append(keep, d)
			last = d.Seq
		}
		if len(keep) == 0 {
			continue
		}
		recs := Records(evs)
		if !deliver(ctx, sink, recs, keep, &cfg) {
			nakAll(keep)
			return nil
		}
		for _, d := range keep {
			ack(ctx, d, &cfg)
		}
		done = last
		if cfg.OnBatch != nil {
			cfg.OnBatch(last, len(recs))
		}
	}
	return nil
}

// deliver hands recs to the sink until it accepts them (true) or ctx is
// done (false), telling the server the batch is in progress meanwhile.
func deliver(ctx context.Context, sink Sink, recs []Record, msgs []events.Delivery, cfg *FollowConfig) bool {
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
		err := exportGraced(ctx, sink, recs)
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

// exportGrace is how long an export under way when the follow is stopped
// may still take (exportGraced): enough for an answer already on its way,
// short enough that a signal still ends a follow whose collector hangs
// promptly (the batch is then handed back).
const exportGrace = 500 * time.Millisecond

// exportGraced hands recs to the sink on a context that ends exportGrace
// after ctx does: an export under way when the follow is stopped is let
// finish, since the collector may hold the records already, and a batch
// handed back (nak) after that would be exported again by the next run.
func exportGraced(ctx context.Context, sink Sink, recs []Record) error {
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(exportGrace, cancel) })
	defer stop()
	return sink.Export(ectx, recs)
}

// ack acknowledges m and waits for the server's confirmation, even when
// ctx is already done: the record was delivered, so its ack must be tried.
func ack(ctx context.Context, m events.Delivery, cfg *FollowConfig) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := m.Ack(actx); err != nil && cfg.OnError != nil {
		cfg.OnError(fmt.Errorf("export: ack: %w", err))
	}
}

// nakAll hands msgs back for immediate redelivery (to this run or the
// next), so a restart does not wait for AckWait.
func nakAll(msgs []events.Delivery) {
	for _, m := range msgs {
		_ = m.Nak()
	}
}
