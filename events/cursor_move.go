package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A cursor opened with [CursorOptions].Keep has one reader. A reader
// waiting on a pull consumer shows as a waiting pull request in the
// consumer's info (the server drops the requests of a reader whose
// connection is gone, so a killed exporter's do not count); one working
// on a batch has none for that while, so the info is asked cursorProbes
// times, cursorProbeEvery apart (and once more right before a move).
const (
	cursorProbes     = 4
	cursorProbeEvery = 250 * time.Millisecond
)

// keepCursor asks opts.Keep about the existing consumer cons. It returns
// true to keep it, false when it was deleted to be made again at
// opts.Since, or an error wrapping ErrCursorInUse when another reader is
// waiting on it.
func (s *store) keepCursor(ctx context.Context, cons jetstream.Consumer, opts CursorOptions) (bool, error) {
	info, err := cursorFree(ctx, cons, opts.Name, cursorProbes)
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
	if _, err := cursorFree(ctx, cons, opts.Name, 1); err != nil {
		return false, err
	}
	err = cursorAttempts(ctx, func(actx context.Context) error { return s.stream.DeleteConsumer(actx, opts.Name) })
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return false, fmt.Errorf("events: cursor: move consumer %s: %w", opts.Name, err)
	}
	return false, nil
}

// cursorFree asks for cons's info probes times, cursorProbeEvery apart,
// and refuses with ErrCursorInUse when one shows a reader waiting on it.
func cursorFree(ctx context.Context, cons jetstream.Consumer, name string, probes int) (*jetstream.ConsumerInfo, error) {
	var info *jetstream.ConsumerInfo
	for i := range probes {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("events: cursor: consumer %s: %w", name, ctx.Err())
			case <-time.After(cursorProbeEvery):
			}
		}
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
	}
	return info, nil
}
