package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A cursor opened with [CursorOptions].Keep has one reader. The
// consumer's info shows a reader at work three ways, and the info is asked
// cursorProbes times, cursorProbeEvery apart (and once more right before
// a move), to catch one:
//   - a reader parked on it: a waiting pull request (the server drops the
//     requests of a reader whose connection is gone, so a killed
//     exporter's do not count);
//   - a reader catching up a backlog: the delivered or acknowledged
//     sequence moves between two probes;
//   - a reader working on a batch (writing it, its sink retrying):
//     deliveries unacknowledged, the last one less than AckWait ago (by
//     the server's clock). A reader killed with a batch unacknowledged
//     looks the same, so this one is waited out: Cursor probes on until
//     that AckWait is over, and refuses as soon as the reader
//     acknowledges, fetches or waits (it lives); a reader that did none
//     of that within AckWait is taken for dead, as JetStream takes it (it
//     redelivers its batch).
//
// What none shows: a reader whose sink has been retrying one batch for
// longer than AckWait (it keeps the batch with in-progress acks, which the
// info does not show), and one idle between two fetches at the moment of
// every probe. Such a reader, when the consumer is moved under it, fails
// on its next fetch with ErrCursorReplaced.
const (
	// cursorDeleteBound bounds the delete of a move (several attempts).
	cursorDeleteBound = 3 * cursorAttempt
	cursorProbes      = 4
	cursorProbeEvery  = 250 * time.Millisecond
	// cursorHeldSlack is added to the wait for deliveries to pass their
	// AckWait: the server's clock and this one run apart a little.
	cursorHeldSlack = 250 * time.Millisecond
)

// keepCursor asks opts.Keep about the existing consumer cons. It returns
// true to keep it, false when it was deleted to be made again at
// opts.Since, or an error wrapping ErrCursorInUse when another reader is
// at work on it.
func (s *store) keepCursor(ctx context.Context, cons jetstream.Consumer, opts CursorOptions) (bool, error) {
	probes := cursorProbes
	if opts.Owned {
		probes = 0 // one look at its position, no reader to look for
	}
	info, err := cursorFree(ctx, cons, opts.Name, probes, nil)
	if err != nil {
		return false, err
	}
	st := CursorState{Acked: info.AckFloor.Stream, Pending: info.NumAckPending}
	if c := info.Config; c.DeliverPolicy == jetstream.DeliverByStartSequencePolicy && c.OptStartSeq > 0 {
		// A consumer made at a start sequence that acknowledged nothing
		// yet reports an ack floor of 0: it stands before its start.
		st.Acked = max(st.Acked, c.OptStartSeq-1)
	}
	keep, err := opts.Keep(ctx, st)
	if err != nil || keep {
		return keep, err
	}
	probes = 1
	if opts.Owned {
		probes = 0
	}
	if _, err := cursorFree(ctx, cons, opts.Name, probes, info); err != nil {
		return false, err
	}
	// Bounded: a server that does not let this user delete consumers
	// never answers (the denial comes as an asynchronous error), and the
	// move must fail, not wait for ever.
	dctx, cancel := context.WithTimeout(ctx, cursorDeleteBound)
	err = cursorAttempts(dctx, func(actx context.Context) error { return s.stream.DeleteConsumer(actx, opts.Name) })
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		if ctx.Err() == nil && dctx.Err() != nil {
			return false, fmt.Errorf("events: cursor: move consumer %s: the server did not answer the delete in %s (does this user %q have the permission to delete consumers, $JS.API.CONSUMER.DELETE.%s.>?): %w",
				opts.Name, cursorDeleteBound, s.cfg.user, StreamName, err)
		}
		return false, fmt.Errorf("events: cursor: move consumer %s: %w", opts.Name, err)
	}
	return false, nil
}

// cursorFree asks for cons's info probes times, cursorProbeEvery apart
// (prev, when not nil, is an earlier probe's), and refuses with
// ErrCursorInUse when one shows a reader at work on it. Deliveries
// unacknowledged within their AckWait are waited out once, probing on
// meanwhile (see above).
func cursorFree(ctx context.Context, cons jetstream.Consumer, name string, probes int, prev *jetstream.ConsumerInfo) (*jetstream.ConsumerInfo, error) {
	var (
		info  *jetstream.ConsumerInfo
		until time.Time // the held deliveries' AckWait over (this clock), once seen
	)
	if probes == 0 {
		// The caller owns the cursor where it runs: one look, for a
		// reader parked on it elsewhere (a waiting pull request; the
		// server drops a dead process's with its connection, so a
		// restart after a kill is not refused).
		err := cursorAttempts(ctx, func(actx context.Context) (err error) {
			info, err = cons.Info(actx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("events: cursor: consumer %s: %w", name, err)
		}
		if info.NumWaiting > 0 {
			return nil, fmt.Errorf("events: cursor %s: %w (pull requests waiting on it: %d)", name, ErrCursorInUse, info.NumWaiting)
		}
		return info, nil
	}
	for i := 0; i < probes || time.Now().Before(until); i++ {
		if i > 0 {
			if err := sleepCtx(ctx, cursorProbeEvery); err != nil {
				return nil, fmt.Errorf("events: cursor: consumer %s: %w", name, err)
			}
		}
		err := cursorAttempts(ctx, func(actx context.Context) (err error) {
			info, err = cons.Info(actx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("events: cursor: consumer %s: %w", name, err)
		}
		why, held := cursorBusy(prev, info)
		switch {
		case held > 0 && until.IsZero():
			// A reader working on a batch, or one killed: probe on
			// until its deliveries pass their AckWait.
			until = time.Now().Add(held + cursorHeldSlack)
		case held > 0 && time.Now().Before(until):
			// Still within it, nothing moved.
		case why != "":
			return nil, fmt.Errorf("events: cursor %s: %w (%s)", name, ErrCursorInUse, why)
		}
		prev = info
	}
	return info, nil
}

// cursorBusy names what in info (and in prev, an earlier probe, if any)
// shows a reader at work on the consumer, or returns "". held is, when
// the only sign is deliveries unacknowledged within their AckWait, how
// long until that AckWait is over.
func cursorBusy(prev, info *jetstream.ConsumerInfo) (why string, held time.Duration) {
	if info.NumWaiting > 0 {
		return fmt.Sprintf("pull requests waiting on it: %d", info.NumWaiting), 0
	}
	if prev != nil && (info.Delivered.Stream != prev.Delivered.Stream || info.AckFloor.Stream != prev.AckFloor.Stream) {
		return fmt.Sprintf("a reader moved it from delivered/acknowledged seq %d/%d to %d/%d meanwhile",
			prev.Delivered.Stream, prev.AckFloor.Stream, info.Delivered.Stream, info.AckFloor.Stream), 0
	}
	if last := info.Delivered.Last; info.NumAckPending > 0 && last != nil {
		if ago, wait := info.TimeStamp.Sub(*last), info.Config.AckWait; ago < wait {
			return fmt.Sprintf("%d deliveries unacknowledged, the last %s ago, within its ack wait of %s: a reader is working on them",
				info.NumAckPending, ago.Round(time.Millisecond), wait), wait - ago
		}
	}
	return "", 0
}

// sleepCtx waits d, or returns ctx's error when it is done first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
