package events

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Cursor defaults ([CursorOptions]).
const (
	defaultCursorBatch   = 256
	defaultCursorAckWait = 30 * time.Second
)

// Cursor implements [Store]: a durable JetStream pull consumer named
// opts.Name, filtered on every fledger subject, with explicit
// acknowledgements and MaxAckPending = Batch. A new one delivers from
// opts.Since; an existing one resumes at its own position, its
// MaxAckPending and AckWait updated when they differ from opts, unless
// opts.Keep moves it (cursor_move.go).
func (s *store) Cursor(ctx context.Context, opts CursorOptions) (Cursor, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if err := checkCursorOptions(opts); err != nil {
		return nil, err
	}
	if opts.Batch == 0 {
		opts.Batch = defaultCursorBatch
	}
	if opts.AckWait == 0 {
		opts.AckWait = defaultCursorAckWait
	}
	var cons jetstream.Consumer
	err := cursorAttempts(ctx, func(actx context.Context) (err error) {
		cons, err = s.stream.Consumer(actx, opts.Name)
		return err
	})
	if err == nil {
		keep := true
		if opts.Keep != nil {
			if keep, err = s.keepCursor(ctx, cons, opts); err != nil {
				return nil, err
			}
		}
		if keep {
			ci := cons.CachedInfo().Config
			if ci.MaxAckPending != opts.Batch || ci.AckWait != opts.AckWait {
				ci.MaxAckPending, ci.AckWait = opts.Batch, opts.AckWait
				if cons, err = s.stream.UpdateConsumer(ctx, ci); err != nil {
					return nil, fmt.Errorf("events: cursor: update consumer %s: %w", opts.Name, err)
				}
			}
			return newCursor(s, opts.Name, cons), nil
		}
		err = jetstream.ErrConsumerNotFound // moved: deleted, made again below
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("events: cursor: consumer %s: %w", opts.Name, err)
	}
	cc := jetstream.ConsumerConfig{
		Durable:       opts.Name,
		Description:   "fledger cursor: a durable, acknowledged position on the ledger",
		FilterSubject: SubjectPrefix + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       opts.AckWait,
		MaxAckPending: opts.Batch,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
	if opts.Since > 1 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, opts.Since
	}
	err = cursorAttempts(ctx, func(actx context.Context) (err error) {
		cons, err = s.stream.CreateConsumer(actx, cc)
		return err
	})
	if errors.Is(err, jetstream.ErrConsumerExists) {
		// Another process made it between the lookup (or the move's
		// delete) and this create, at another position.
		if opts.Keep != nil {
			return nil, fmt.Errorf("events: cursor %s: %w (another reader made it again while this one was moving it)", opts.Name, ErrCursorInUse)
		}
		err = cursorAttempts(ctx, func(actx context.Context) (err error) {
			cons, err = s.stream.Consumer(actx, opts.Name)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("events: cursor: create consumer %s: %w", opts.Name, err)
	}
	return newCursor(s, opts.Name, cons), nil
}

// cursorAttempt bounds one consumer lookup or creation: on a cluster just
// formed, or during an election, a request can go unanswered, and one
// request waiting out the caller's whole deadline (a minute) would be the
// only one sent.
const cursorAttempt = 5 * time.Second

// cursorAttempts runs op with a deadline of cursorAttempt, again after
// cursorRetry while the attempt timed out or met a transient failure
// (fetchTransient) and ctx allows. Other errors, ErrConsumerNotFound
// included, come back at once.
func cursorAttempts(ctx context.Context, op func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, cursorAttempt)
		err := op(actx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) && !fetchTransient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(cursorRetry):
		}
	}
}

// cursor is a [Cursor] on a durable pull consumer.
type cursor struct {
	s       *store
	name    string
	closed  atomic.Bool // Close was called: Fetch refuses
	cons    jetstream.Consumer
	created time.Time // the consumer's creation, to tell it from one made again
	seen    uint64    // the last sequence fetched (0 = none yet), for gaps
	seenDlv uint64    // the last consumer (delivery) sequence fetched
	// checkedAt is when a fetch that got nothing last made sure the
	// consumer is still the one opened (idleCheck); missing is set when
	// that check did not find it.
	checkedAt time.Time
	missing   bool
}

// newCursor is the cursor reading cons, the consumer named name.
func newCursor(s *store, name string, cons jetstream.Consumer) *cursor {
	return &cursor{s: s, name: name, cons: cons, created: cons.CachedInfo().Created}
}

// Fetch implements [Cursor]: it waits up to wait for the next message and
// takes the ones already waiting behind it, up to n in all. A run of
// sequences missing between two messages fetched by this cursor comes as
// a Delivery with Err wrapping [ErrGap] before the message after it,
// unless the consumer was made again meanwhile (another process moved it:
// a jump, or a first delivery of a sequence, or under a delivery number,
// already fetched, makes Fetch compare the consumer's creation time):
// then Fetch hands the messages back and returns an error wrapping
// [ErrCursorReplaced].
func (c *cursor) Fetch(ctx context.Context, n int, wait time.Duration) ([]Delivery, error) {
	if c.s.isClosed() {
		return nil, ErrClosed
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("events: cursor %s is closed: %w", c.name, ErrClosed)
	}
	if err := checkFetch(c.name, n); err != nil {
		return nil, err
	}
	msgs, err := c.fetch(ctx, n, wait)
	if err != nil || len(msgs) == 0 {
		return nil, err
	}
	out := make([]Delivery, 0, len(msgs))
	checked := false
	for _, m := range msgs {
		meta, err := m.Metadata()
		if err != nil {
			nakAll(msgs)
			return nil, fmt.Errorf("events: cursor: fetch: %w", err)
		}
		seq := meta.Sequence.Stream
		// A first delivery of a sequence already fetched, or numbered at
		// or before one already fetched, comes from another consumer.
		again := meta.NumDelivered == 1 && (seq <= c.seen || meta.Sequence.Consumer <= c.seenDlv)
		if c.seen != 0 && !checked && (seq > c.seen+1 || again) {
			checked = true
			if err := c.replaced(ctx); err != nil {
				nakAll(msgs) // the new consumer's: its reader gets them at once
				return nil, err
			}
		}
		if c.seen != 0 && seq > c.seen+1 {
			gap := &DecodeError{Seq: c.seen + 1, Through: seq - 1, Index: -1, Err: ErrGap}
			out = append(out, Delivery{StoredCommit: StoredCommit{Seq: c.seen + 1, Err: gap}, h: noDelivery{}})
		}
		c.seen, c.seenDlv = max(c.seen, seq), max(c.seenDlv, meta.Sequence.Consumer)
		sc := StoredCommit{Seq: seq, Subject: m.Subject()}
		evs, err := c.s.reg.DecodeCommit(m.Data(), seq, sc.Subject)
		sc.Events, sc.Err = evs, asDecodeError(err, seq, sc.Subject, len(m.Data()))
		out = append(out, Delivery{StoredCommit: sc, h: jsDelivery{m}})
	}
	return out, nil
}

// replaced returns nil when the consumer under c's name is the one c
// opened, else an error wrapping ErrCursorReplaced naming it (or the
// error asking for its info).
func (c *cursor) replaced(ctx context.Context) error {
	var info *jetstream.ConsumerInfo
	err := cursorAttempts(ctx, func(actx context.Context) (err error) {
		info, err = c.cons.Info(actx)
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		// A consumer goes with its stream: removed, or replaced by a
		// rotation, is not another reader's doing.
		if gone := c.streamGone(ctx); gone != nil {
			return gone
		}
		return c.replacedErr("it was deleted")
	case err != nil:
		return fmt.Errorf("events: cursor %s: %w", c.name, err)
	case !info.Created.Equal(c.created):
		return c.replacedErr(fmt.Sprintf("the consumer opened was created at %s, the one now under the name at %s",
			c.created.UTC().Format(time.RFC3339Nano), info.Created.UTC().Format(time.RFC3339Nano)))
	}
	return nil
}

// streamGone is an error wrapping [ErrStreamGone] when the stream c's
// store opened is not on the server any more, or was replaced by one of
// the same name; nil otherwise (or when that cannot be told).
func (c *cursor) streamGone(ctx context.Context) error {
	var info *jetstream.StreamInfo
	err := cursorAttempts(ctx, func(actx context.Context) (err error) {
		info, err = c.s.stream.Info(actx)
		return err
	})
	switch {
	case errors.Is(err, ErrStreamGone):
		return fmt.Errorf("events: cursor %s: the %s stream is not on the server any more (removed, or a rotation under way): %w", c.name, StreamName, err)
	case err != nil:
		return nil
	}
	if err := c.s.replaced(ctx, info); err != nil {
		return fmt.Errorf("events: cursor %s: %w", c.name, err)
	}
	return nil
}

// replacedErr is the error for c's consumer deleted or made again.
func (c *cursor) replacedErr(why string) error {
	return fmt.Errorf("events: cursor %s: %w: another reader moved consumer %s (%s); this reader stops rather than share it", c.name, ErrCursorReplaced, c.name, why)
}

// fetch waits for the next message (up to wait; none is not an error) and
// takes the ones already waiting behind it, up to batch in all. A pull
// that reaches no consumer leader (just created on a cluster, or during
// its election after a node died: no responders, a 503; a server
// restarting under it: see fetchTransient) is asked again
// every [cursorRetry] until wait is over, as for a stream unavailable
// (classifySend): the reader sees a quiet stream, not an error.
func (c *cursor) fetch(ctx context.Context, batch int, wait time.Duration) ([]jetstream.Msg, error) {
	deadline := time.Now().Add(wait)
	var m jetstream.Msg
	for {
		if time.Until(deadline) <= 0 {
			return nil, c.idleCheck(ctx)
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		var err error
		m, err = c.cons.Next(jetstream.FetchContext(wctx))
		cancel()
		if err == nil {
			break
		}
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoMessages) {
			return nil, c.idleCheck(ctx)
		}
		if errors.Is(err, jetstream.ErrInvalidOption) && !time.Now().Before(deadline) {
			// FetchContext refuses a deadline that passed between the
			// check above and the call: the wait is simply over.
			return nil, c.idleCheck(ctx)
		}
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			if gone := c.streamGone(ctx); gone != nil {
				return nil, gone
			}
			return nil, c.replacedErr("it was deleted")
		}
		if !fetchTransient(err) || ctx.Err() != nil {
			return nil, fmt.Errorf("events: cursor: fetch: %w", err)
		}
		pause := min(cursorRetry, time.Until(deadline))
		if pause <= 0 {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(pause):
		}
	}
	msgs := []jetstream.Msg{m}
	if batch > 1 {
		mb, err := c.cons.FetchNoWait(batch - 1)
		if err != nil {
			if fetchTransient(err) {
				return msgs, nil // the rest comes with the next fetch
			}
			nakAll(msgs)
			return nil, fmt.Errorf("events: cursor: fetch: %w", err)
		}
		for m := range mb.Messages() {
			msgs = append(msgs, m)
		}
		if err := mb.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) && !fetchTransient(err) {
			nakAll(msgs)
			return nil, fmt.Errorf("events: cursor: fetch: %w", err)
		}
	}
	return msgs, nil
}

// cursorRetry is how long a fetch that reached no consumer leader waits
// before it asks again.
const cursorRetry = 100 * time.Millisecond

// cursorIdleCheck is how often, at most, fetches that get nothing ask
// whether the consumer is still there: a pull on a consumer deleted while
// none was waiting (by an operator, or with its stream: a rotation) gets
// no answer at all, and the reader would see a quiet stream for ever.
var cursorIdleCheck = 10 * time.Second

// idleCheck is what a fetch that got nothing returns: nil, or, when two
// checks in a row (one per cursorIdleCheck) found the consumer gone or
// made again, or its stream gone, that error ([cursor.replaced]). Two in
// a row: a cluster whose meta leader just changed may not know a
// consumer, or a stream, for a few seconds. Each check is bounded by the
// store's attempt time; one that cannot reach the server is no verdict.
func (c *cursor) idleCheck(ctx context.Context) error {
	now := time.Now()
	if c.checkedAt.IsZero() {
		c.checkedAt = now // the first quiet fetch starts the clock
		return nil
	}
	if now.Sub(c.checkedAt) < cursorIdleCheck || ctx.Err() != nil {
		return nil
	}
	c.checkedAt = now
	cctx, cancel := context.WithTimeout(ctx, c.s.attemptTimeout())
	defer cancel()
	err := c.replaced(cctx)
	if !errors.Is(err, ErrCursorReplaced) && !errors.Is(err, ErrStreamGone) {
		c.missing = false
		return nil
	}
	if !c.missing {
		c.missing = true // asked again at the next check
		return nil
	}
	return err
}

// fetchTransient reports whether a pull failed for a reason that passes
// on its own: no consumer leader yet, a connection reconnecting, a
// JetStream 503 (classifySend's "not sent"), the consumer's leadership
// moving (a step-down, its node lost), or the server the pull was waiting
// on shutting down (a rolling restart).
func fetchTransient(err error) bool {
	return classifySend(err) == sendNotSent || errors.Is(err, jetstream.ErrServerShutdown) ||
		errors.Is(err, jetstream.ErrNoHeartbeat) || errors.Is(err, jetstream.ErrConsumerLeadershipChanged)
}

// Close implements [Cursor]. A pull consumer holds nothing open between
// fetches; the position stays stored on the server.
func (c *cursor) Close() error {
	c.closed.Store(true)
	return nil
}

// nakAll hands msgs back for immediate redelivery.
func nakAll(msgs []jetstream.Msg) {
	for _, m := range msgs {
		_ = m.Nak()
	}
}

// jsDelivery is a delivered JetStream message's acknowledgements.
type jsDelivery struct{ m jetstream.Msg }

// ack is a double ack: it waits for the server's confirmation.
func (d jsDelivery) ack(ctx context.Context) error {
	if err := d.m.DoubleAck(ctx); err != nil {
		return fmt.Errorf("events: cursor: ack: %w", err)
	}
	return nil
}

func (d jsDelivery) inProgress() error { return d.m.InProgress() }
func (d jsDelivery) nak() error        { return d.m.Nak() }

// noDelivery is the handle of a Delivery that stands for no message (a
// gap): there is nothing to acknowledge.
type noDelivery struct{}

func (noDelivery) ack(context.Context) error { return nil }
func (noDelivery) inProgress() error         { return nil }
func (noDelivery) nak() error                { return nil }

// checkCursorOptions refuses a missing or malformed name and negative
// settings, with an error wrapping ErrInvalidOption.
func checkCursorOptions(opts CursorOptions) error {
	if opts.Name == "" {
		return invalid("cursor without a name")
	}
	for i := 0; i < len(opts.Name); i++ {
		if b := opts.Name[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return invalid("cursor name %q: byte %q at %d is not a letter, digit, - or _", opts.Name, b, i)
		}
	}
	if opts.Batch < 0 || opts.AckWait < 0 {
		return invalid("cursor %s: negative batch %d or ack wait %v", opts.Name, opts.Batch, opts.AckWait)
	}
	return nil
}

// checkFetch refuses a fetch of fewer than one commit.
func checkFetch(name string, n int) error {
	if n < 1 {
		return invalid("cursor %s: fetch of %d commits", name, n)
	}
	return nil
}
