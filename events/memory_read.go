package events

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// decode decodes the message at seq as every reader does.
func (m *memStore) decode(seq uint64, msg *memMsg) ([]Event, *DecodeError) {
	evs, err := m.reg.DecodeCommit(msg.data, seq, msg.subject)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			de = &DecodeError{Seq: seq, Subject: msg.subject, Size: len(msg.data), Index: -1, Err: err}
		}
		return nil, de
	}
	return evs, nil
}

// ReadSubject implements [Store].
func (m *memStore) ReadSubject(ctx context.Context, filter string) ([]Event, uint64, error) {
	if err := checkFilter(filter); err != nil {
		return nil, 0, err
	}
	if m.isClosed() {
		return nil, 0, ErrClosed
	}
	msgs, _ := m.snapshot()
	var (
		out  []Event
		last uint64
	)
	for i := range msgs {
		if !subjectMatches(filter, msgs[i].subject) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("events: read %s: %w", filter, err)
		}
		seq := uint64(i) + 1
		last = seq
		evs, de := m.decode(seq, &msgs[i])
		if de != nil {
			if m.cfg.logger != nil {
				m.cfg.logger.Warn("events: skipping a stored message that is not a fledger commit", "filter", filter, "err", de)
			}
			continue
		}
		out = append(out, evs...)
	}
	return out, last, nil
}

// Read implements [Store].
func (m *memStore) Read(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if m.isClosed() {
			yield(Event{}, ErrClosed)
			return
		}
		msgs, _ := m.snapshot()
		for seq := max(from, 1); seq <= uint64(len(msgs)); seq++ {
			if err := ctx.Err(); err != nil {
				yield(Event{}, fmt.Errorf("events: read from sequence %d: %w", seq, err))
				return
			}
			if !m.yieldEvents(seq, &msgs[seq-1], yield) {
				return
			}
		}
	}
}

// Watch implements [Store]. It ends without an error when ctx is done or
// the store is closed.
func (m *memStore) Watch(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if m.isClosed() {
			yield(Event{}, ErrClosed)
			return
		}
		for next := max(from, 1); ; {
			msgs, changed := m.snapshot()
			for ; next <= uint64(len(msgs)); next++ {
				if ctx.Err() != nil || m.isClosed() {
					return
				}
				if !m.yieldEvents(next, &msgs[next-1], yield) {
					return
				}
			}
			if !m.wait(ctx, changed) {
				return
			}
		}
	}
}

// yieldEvents yields the events of the message at seq, or its
// *DecodeError; false when the caller stopped.
func (m *memStore) yieldEvents(seq uint64, msg *memMsg, yield func(Event, error) bool) bool {
	evs, de := m.decode(seq, msg)
	if de != nil {
		return yield(Event{Seq: seq, Index: -1}, de)
	}
	for _, ev := range evs {
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}

// Follow implements [Store]. The in-memory stream has no gaps, so every
// sequence from opts.From is yielded as a commit. It ends without an
// error when ctx is done, and with ErrClosed when the store is closed.
func (m *memStore) Follow(ctx context.Context, opts FollowOptions) iter.Seq2[StoredCommit, error] {
	return func(yield func(StoredCommit, error) bool) {
		for next := max(opts.From, 1); ; {
			if m.isClosed() {
				yield(StoredCommit{}, ErrClosed)
				return
			}
			msgs, changed := m.snapshot()
			for ; next <= uint64(len(msgs)); next++ {
				if ctx.Err() != nil {
					return
				}
				if !yield(m.storedCommit(next, &msgs[next-1], opts), nil) {
					return
				}
			}
			select {
			case <-changed:
			case <-m.done:
			case <-ctx.Done():
				return
			}
		}
	}
}

// storedCommit is the message at seq as a follower sees it: decoded when
// decode is nil or selects its subject.
func (m *memStore) storedCommit(seq uint64, msg *memMsg, opts FollowOptions) StoredCommit {
	c := StoredCommit{Seq: seq, Subject: msg.subject}
	if (opts.Decode == nil || opts.Decode(msg.subject)) && (opts.Skip == nil || !opts.Skip(seq)) {
		c.Events, c.Err = m.decode(seq, msg)
	}
	return c
}
