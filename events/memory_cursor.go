package events

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// memCursor is a durable cursor's state, kept by name for the life of the
// in-memory store (under the store's mu).
type memCursor struct {
	name    string
	next    uint64                 // the next sequence never delivered
	pending map[uint64]*memPending // delivered, not acknowledged
	batch   int
	ackWait time.Duration
	waiting int // fetches waiting for a commit: readers parked on it
}

// state is c's [CursorState].
func (c *memCursor) state() CursorState {
	st := CursorState{Acked: c.next - 1, Pending: len(c.pending)}
	for seq := range c.pending {
		st.Acked = min(st.Acked, seq-1)
	}
	return st
}

// memPending is a delivered commit waiting for its acknowledgement.
type memPending struct {
	due time.Time // delivered again from then on
	nak bool      // handed back: delivered again at once
}

// memCursorHandle is one opened [Cursor] on a memCursor.
type memCursorHandle struct {
	m      *memStore
	c      *memCursor
	closed atomic.Bool
}

// Cursor implements [Store]. A cursor opened again by name resumes where
// it stands (Since is ignored, unless opts.Keep moves it there) and takes
// the Batch and AckWait given. With opts.Keep, a cursor is in use as a
// JetStream consumer's info shows it (cursor_move.go): a fetch waiting
// on it, or (once waited out) a delivery unacknowledged within its
// AckWait that its reader acknowledged meanwhile. A handle whose cursor
// was moved fails its next fetch with ErrCursorReplaced.
func (m *memStore) Cursor(ctx context.Context, opts CursorOptions) (Cursor, error) {
	if err := checkCursorOptions(opts); err != nil {
		return nil, err
	}
	if m.isClosed() {
		return nil, ErrClosed
	}
	batch, ackWait := opts.Batch, opts.AckWait
	if batch == 0 {
		batch = defaultCursorBatch
	}
	if ackWait == 0 {
		ackWait = defaultCursorAckWait
	}
	keep := true
	if opts.Keep != nil {
		var err error
		if keep, err = m.keepCursor(ctx, opts); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cursors[opts.Name]
	if c != nil && !keep {
		if err := memCursorParked(c, opts.Owned); err != nil { // opened while Keep ran
			return nil, err
		}
		c = nil
	}
	if c == nil {
		c = &memCursor{name: opts.Name, next: max(opts.Since, 1), pending: map[uint64]*memPending{}}
		m.cursors[opts.Name] = c
	}
	c.batch, c.ackWait = batch, ackWait
	return &memCursorHandle{m: m, c: c}, nil
}

// keepCursor asks opts.Keep about the existing cursor opts.Name, if any
// (true: keep it), outside the store's lock: Keep may read the store.
func (m *memStore) keepCursor(ctx context.Context, opts CursorOptions) (bool, error) {
	m.mu.Lock()
	c := m.cursors[opts.Name]
	var (
		st   CursorState
		held time.Duration
		err  error
	)
	if c != nil {
		st = c.state()
		if opts.Owned {
			err = memCursorParked(c, true)
		} else {
			held, err = memCursorBusy(c, time.Now())
		}
	}
	m.mu.Unlock()
	if c == nil {
		return true, nil
	}
	if held > 0 {
		// Deliveries within their AckWait: wait them out, as a
		// JetStream cursor does; a reader that waits on it or
		// acknowledges meanwhile is at work.
		if !m.heldOut(ctx, c, st, time.Now().Add(held)) {
			return false, err
		}
		err = nil
	}
	if err != nil {
		return false, err
	}
	return opts.Keep(ctx, st)
}

// heldOut waits until deadline for c to stay as st, nobody waiting on it
// (true), or to change (false: its reader is at work), or ctx to end.
func (m *memStore) heldOut(ctx context.Context, c *memCursor, st CursorState, deadline time.Time) bool {
	for {
		m.mu.Lock()
		if m.cursors[c.name] != c || c.waiting > 0 || c.state() != st {
			m.mu.Unlock()
			return false
		}
		changed := m.changed
		m.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			return true
		}
		t := time.NewTimer(left)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}

// memCursorParked is memCursorBusy for an owned cursor (owned: only a
// fetch waiting on it counts, as a JetStream cursor's one look) or, not
// owned, memCursorBusy itself. Call with m.mu held.
func memCursorParked(c *memCursor, owned bool) error {
	if !owned {
		_, err := memCursorBusy(c, time.Now())
		return err
	}
	if c.waiting > 0 {
		return fmt.Errorf("events: cursor %s: %w (pull requests waiting on it: %d)", c.name, ErrCursorInUse, c.waiting)
	}
	return nil
}

// memCursorBusy returns an error wrapping ErrCursorInUse when a fetch
// waits on c or it has a delivery made less than its ack wait before now and
// unacknowledged (handed back too: a JetStream consumer counts those
// until they are acknowledged), else nil; held is, for the deliveries
// alone, how long until the last one is due again.
func memCursorBusy(c *memCursor, now time.Time) (held time.Duration, err error) {
	if c.waiting > 0 {
		return 0, fmt.Errorf("events: cursor %s: %w (fetches waiting on it: %d)", c.name, ErrCursorInUse, c.waiting)
	}
	n := 0
	for _, p := range c.pending {
		if now.Before(p.due) {
			n++
			held = max(held, p.due.Sub(now))
		}
	}
	if n > 0 {
		return held, fmt.Errorf("events: cursor %s: %w (%d deliveries unacknowledged within their ack wait of %s)", c.name, ErrCursorInUse, n, c.ackWait)
	}
	return 0, nil
}

// Fetch implements [Cursor]: commits to deliver again (handed back, or
// not acknowledged within AckWait) first, in stream order, then new ones
// while fewer than Batch are unacknowledged.
func (h *memCursorHandle) Fetch(ctx context.Context, n int, wait time.Duration) ([]Delivery, error) {
	if err := checkFetch(h.c.name, n); err != nil {
		return nil, err
	}
	until := time.Now().Add(wait)
	for {
		if h.closed.Load() {
			return nil, fmt.Errorf("events: cursor %s is closed: %w", h.c.name, ErrClosed)
		}
		if h.m.isClosed() {
			return nil, ErrClosed
		}
		out, msgs, changed, due, moved := h.take(n)
		if moved {
			return nil, fmt.Errorf("events: cursor %s: %w: another reader moved cursor %s; this reader stops rather than share it", h.c.name, ErrCursorReplaced, h.c.name)
		}
		if len(out) > 0 {
			return h.deliveries(out, msgs), nil
		}
		now := time.Now()
		if !now.Before(until) {
			return nil, nil
		}
		wake := until
		if !due.IsZero() && due.Before(wake) {
			wake = due
		}
		timer := time.NewTimer(wake.Sub(now))
		h.park(1)
		select {
		case <-changed:
		case <-timer.C:
		case <-h.m.done:
		case <-ctx.Done():
			timer.Stop()
			h.park(-1)
			return nil, fmt.Errorf("events: cursor %s: fetch: %w", h.c.name, ctx.Err())
		}
		timer.Stop()
		h.park(-1)
	}
}

// park counts a fetch starting (+1) or ending (-1) its wait.
func (h *memCursorHandle) park(d int) {
	h.m.mu.Lock()
	h.c.waiting += d
	h.m.mu.Unlock()
}

// take marks up to n commits delivered and returns their sequences,
// the stream's messages, the channel closed at the next change and, when
// nothing is to be delivered, the earliest time a pending commit falls
// due ("" when none); moved when the cursor was moved (made again) since
// h was opened.
func (h *memCursorHandle) take(n int) (out []uint64, msgs []memMsg, changed <-chan struct{}, due time.Time, moved bool) {
	m, c := h.m, h.c
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cursors[c.name] != c {
		return nil, nil, nil, time.Time{}, true
	}
	now := time.Now()
	for seq, p := range c.pending {
		if p.nak || !now.Before(p.due) {
			out = append(out, seq)
		} else if due.IsZero() || p.due.Before(due) {
			due = p.due
		}
	}
	slices.Sort(out)
	out = out[:min(len(out), n)]
	for ; len(out) < n && len(c.pending) < c.batch && c.next <= uint64(len(m.msgs)); c.next++ {
		out = append(out, c.next)
		c.pending[c.next] = &memPending{}
	}
	for _, seq := range out {
		*c.pending[seq] = memPending{due: now.Add(c.ackWait)}
	}
	return out, m.msgs, m.changed, due, false
}

// deliveries decodes the commits at seqs.
func (h *memCursorHandle) deliveries(seqs []uint64, msgs []memMsg) []Delivery {
	out := make([]Delivery, len(seqs))
	for i, seq := range seqs {
		out[i] = Delivery{
			StoredCommit: h.m.storedCommit(seq, &msgs[seq-1], FollowOptions{}),
			h:            &memDelivery{m: h.m, c: h.c, seq: seq},
		}
	}
	return out
}

// Close implements [Cursor]: a Fetch waiting on this handle returns
// ErrClosed. The cursor's position and its unacknowledged commits stay
// under its name.
func (h *memCursorHandle) Close() error {
	h.closed.Store(true)
	h.m.mu.Lock()
	h.m.notifyLocked()
	h.m.mu.Unlock()
	return nil
}

// memDelivery is the handle of one delivered commit.
type memDelivery struct {
	m   *memStore
	c   *memCursor
	seq uint64
}

// update applies f to the commit's pending state, if it is still pending,
// and wakes the waiting fetches.
func (d *memDelivery) update(f func(c *memCursor, p *memPending)) error {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	if d.m.isClosed() {
		return ErrClosed
	}
	if p := d.c.pending[d.seq]; p != nil {
		f(d.c, p)
		d.m.notifyLocked()
	}
	return nil
}

func (d *memDelivery) ack(ctx context.Context) error {
	return d.update(func(c *memCursor, _ *memPending) { delete(c.pending, d.seq) })
}

func (d *memDelivery) inProgress() error {
	return d.update(func(c *memCursor, p *memPending) { p.due = time.Now().Add(c.ackWait) })
}

func (d *memDelivery) nak() error {
	return d.update(func(_ *memCursor, p *memPending) { p.nak = true })
}
