package events

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A stream removed and made again under a running process (a rotation
// while it ran: docs/operations.md "Start a fresh stream") has the same
// name and may go on at the same sequence; its engines and followers were
// bound to the old one. The store keeps what identified the stream when
// it opened it and refuses another: no decision is taken, no snapshot
// labelled and no append re-sent on it, and health says so.

// openedStream is what identified the stream when the store opened it.
type openedStream struct {
	// Created is the stream's creation time.
	Created time.Time
	// FirstSeq is its first sequence, FirstID the message id stored
	// there ("" while it was empty).
	FirstSeq uint64
	FirstID  string
}

// noteOpened records the stream the store just opened.
func (s *store) noteOpened(ctx context.Context) error {
	info := s.stream.CachedInfo()
	o := openedStream{Created: info.Created, FirstSeq: max(info.Config.FirstSeq, 1)}
	if info.State.Msgs > 0 {
		m, err := s.leaderGet(ctx, msgGet{Seq: o.FirstSeq})
		if err != nil {
			return fmt.Errorf("events: read the first message of %s: %w", StreamName, err)
		}
		if m != nil {
			o.FirstID = m.MsgID
		}
	}
	s.openedMu.Lock()
	s.opened = o
	s.openedMu.Unlock()
	return nil
}

// replaced is an error wrapping [ErrStreamGone] when info is of another
// stream than the one this store opened, nil otherwise. Its creation time
// is the sign; as a stream whose stored metadata lacks one (written by an
// old server) is stamped again at every server restart, a different
// creation time is confirmed by the first message: a stream that was
// empty when opened by its configured first sequence, otherwise by the
// message id at the opened first sequence. When the server does not
// answer, it is no verdict (nil: the next look asks again).
// openedNow is s.opened, read under its lock.
func (s *store) openedNow() openedStream {
	s.openedMu.Lock()
	defer s.openedMu.Unlock()
	return s.opened
}

func (s *store) replaced(ctx context.Context, info *jetstream.StreamInfo) error {
	o := s.openedNow()
	if o.Created.IsZero() {
		return nil
	}
	if info.Created.Equal(o.Created) {
		if o.FirstID == "" && info.State.Msgs > 0 {
			// Empty when opened, written since: its first message is
			// known from now on.
			if m, err := s.leaderGet(ctx, msgGet{Seq: o.FirstSeq}); err == nil && m != nil {
				s.openedMu.Lock()
				s.opened.FirstID = m.MsgID
				s.openedMu.Unlock()
			}
		}
		return nil
	}
	if o.FirstID == "" {
		if max(info.Config.FirstSeq, 1) == o.FirstSeq {
			return nil
		}
	} else {
		m, err := s.leaderGet(ctx, msgGet{Seq: o.FirstSeq})
		if err != nil {
			return nil
		}
		if m != nil && m.MsgID == o.FirstID {
			return nil
		}
	}
	return &streamReplacedError{msg: fmt.Sprintf("events: the %s stream was replaced while this process ran (the one on the server was created %s, the one it opened %s): restart fledger on the current stream",
		StreamName, info.Created.UTC().Format(time.RFC3339Nano), o.Created.UTC().Format(time.RFC3339Nano))}
}

// streamReplacedError is [ErrStreamGone] for a stream that is there, but
// not the one the store opened: its text does not end in JetStream's
// "stream not found".
type streamReplacedError struct{ msg string }

func (e *streamReplacedError) Error() string { return e.msg }

// Is reports ErrStreamGone.
func (e *streamReplacedError) Is(target error) bool { return target == ErrStreamGone }
