package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Group commit. With fsync on every write (the default) the server syncs
// each published message on its own, so concurrent appends published one
// by one stay at the disk's fsync rate however many turns run. An ADR-50
// atomic batch is written and synced once, whatever its size, but costs a
// fixed 3–4 fsyncs of staging; measured on the project's machine, plain
// and pipelined publishes win below about 8 messages, batches above. So
// appends queue to a committer with at most two flushes in flight:
//
//   - a flush of one message is a plain publish: a lone decision is sent
//     the moment it arrives and never waits for company;
//   - a flush of 2 to batchMin-1 messages is pipelined (async publishes,
//     then every ack);
//   - a flush of batchMin or more is one atomic batch (at most batchMax);
//     members that would make the batch fail for no reason of their own
//     (one guarding a subject an earlier member writes, or repeating an
//     earlier member's message id) are held back and sent after it.
//
// A batch is all or nothing: when the server rejects it (a member's
// expectation failed, a duplicate message id) nothing is stored, and every
// member is re-sent on its own, pipelined, so each gets its own exact
// answer — only the real conflict fails. Every PubAck still means the
// message is on disk. A stream without AllowAtomicPublish (created by an
// earlier fledger) gets pipelined flushes only.
const (
	groupBatchMin  = 8
	groupBatchMax  = 256
	groupInflight  = 2
	codeAtomicOff  = 10174 // atomic publish is disabled on the stream
	batchIDHeader  = "Nats-Batch-Id"
	batchSeqHeader = "Nats-Batch-Sequence"
	batchCommitHdr = "Nats-Batch-Commit"
)

// GroupStats counts what the committer did ([Store] implementations that
// group commits report them through [GroupCommitStats]).
type GroupStats struct {
	// Flushes by kind: Single (a plain publish), Pipelined (2 or more
	// async publishes), Batches (atomic batches) and BatchedMsgs (their
	// members); Fallbacks counts rejected batches whose members were
	// re-sent one by one.
	Single, Pipelined, Batches, BatchedMsgs, Fallbacks uint64
}

// GroupCommitStats returns st's group-commit counters (zero when st does
// not group commits).
func GroupCommitStats(st Store) GroupStats {
	if s, ok := st.(*store); ok && s.group != nil {
		return s.group.stats()
	}
	return GroupStats{}
}

// publish sends one commit message and waits for its PubAck, through the
// committer when the store groups commits.
func (s *store) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	if s.group == nil {
		return s.js.PublishMsg(ctx, msg)
	}
	return s.group.publish(ctx, msg)
}

type pendingPub struct {
	msg  *nats.Msg
	done chan pubResult
}

type pubResult struct {
	ack *jetstream.PubAck
	err error
}

type committer struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	timeout time.Duration
	atomic  atomic.Bool

	mu    sync.Mutex
	queue []*pendingPub
	wake  chan struct{}
	slots chan struct{}
	quit  chan struct{}
	wg    sync.WaitGroup

	single, pipelined, batches, batched, fallbacks atomic.Uint64
}

func newCommitter(nc *nats.Conn, js jetstream.JetStream, timeout time.Duration, atomicOK bool) *committer {
	c := &committer{nc: nc, js: js, timeout: timeout, wake: make(chan struct{}, 1),
		slots: make(chan struct{}, groupInflight), quit: make(chan struct{})}
	c.atomic.Store(atomicOK)
	c.wg.Add(1)
	go c.run()
	return c
}

func (c *committer) stats() GroupStats {
	return GroupStats{Single: c.single.Load(), Pipelined: c.pipelined.Load(), Batches: c.batches.Load(),
		BatchedMsgs: c.batched.Load(), Fallbacks: c.fallbacks.Load()}
}

// publish queues msg and waits for its PubAck. When ctx ends first the
// message may still be stored: the outcome is unknown.
func (c *committer) publish(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	p := &pendingPub{msg: msg, done: make(chan pubResult, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	c.mu.Unlock()
	c.nudge()
	select {
	case r := <-p.done:
		return r.ack, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the ack (the commit may be stored): %w", ctx.Err())
	case <-c.quit:
		return nil, ErrClosed
	}
}

func (c *committer) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run hands queued messages to flushes, at most groupInflight at a time:
// while both are busy, arrivals gather into the next group.
func (c *committer) run() {
	defer c.wg.Done()
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			return
		}
		for {
			select {
			case c.slots <- struct{}{}:
			case <-c.quit:
				return
			}
			c.mu.Lock()
			n := min(len(c.queue), groupBatchMax)
			group := append([]*pendingPub(nil), c.queue[:n]...)
			c.queue = append(c.queue[:0:0], c.queue[n:]...)
			c.mu.Unlock()
			if n == 0 {
				<-c.slots
				break
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.flush(group)
				<-c.slots
				c.nudge()
			}()
		}
	}
}

func (c *committer) close() {
	close(c.quit)
	c.wg.Wait()
}

func (c *committer) flush(group []*pendingPub) {
	switch {
	case len(group) == 1:
		c.single.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		ack, err := c.js.PublishMsg(ctx, group[0].msg)
		cancel()
		group[0].done <- pubResult{ack, err}
	case len(group) < groupBatchMin || !c.atomic.Load():
		c.sendPipelined(group)
	default:
		batch, held := splitBatch(group)
		if len(batch) < groupBatchMin {
			c.sendPipelined(group)
			return
		}
		if !c.sendBatch(batch) {
			c.fallbacks.Add(1)
			c.sendPipelined(batch)
		}
		if len(held) > 0 {
			c.sendPipelined(held)
		}
	}
}

// sendPipelined publishes every message without waiting, then collects
// each one's ack.
func (c *committer) sendPipelined(group []*pendingPub) {
	c.pipelined.Add(1)
	futs := make([]jetstream.PubAckFuture, len(group))
	for i, p := range group {
		f, err := c.js.PublishMsgAsync(p.msg)
		if err != nil {
			p.done <- pubResult{err: err}
			continue
		}
		futs[i] = f
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	for i, f := range futs {
		if f == nil {
			continue
		}
		select {
		case ack := <-f.Ok():
			group[i].done <- pubResult{ack: ack}
		case err := <-f.Err():
			group[i].done <- pubResult{err: err}
		case <-timer.C:
			for _, p := range group[i:] {
				p.done <- pubResult{err: fmt.Errorf("no ack within %v (the commit may be stored): %w", c.timeout, context.DeadlineExceeded)}
			}
			return
		}
	}
}

// sendBatch publishes group as one atomic batch and answers every member
// from the commit's ack (member i of n is stored at ack.seq-n+1+i). It
// returns false, having answered nobody, when the batch was not stored.
func (c *committer) sendBatch(group []*pendingPub) bool {
	id := nuid.Next()
	n := len(group)
	for i, p := range group {
		m := &nats.Msg{Subject: p.msg.Subject, Data: p.msg.Data, Header: nats.Header{}}
		for k, v := range p.msg.Header {
			m.Header[k] = v
		}
		m.Header.Set(batchIDHeader, id)
		m.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
		if i < n-1 {
			if err := c.nc.PublishMsg(m); err != nil {
				return false
			}
			continue
		}
		m.Header.Set(batchCommitHdr, "1")
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		ack, err := c.js.PublishMsg(ctx, m)
		cancel()
		if err != nil {
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && apiErr.ErrorCode == codeAtomicOff {
				c.atomic.Store(false)
			}
			return false
		}
		c.batches.Add(1)
		c.batched.Add(uint64(n))
		for j, q := range group {
			q.done <- pubResult{ack: &jetstream.PubAck{Stream: ack.Stream, Sequence: ack.Sequence - uint64(n-1-j), Domain: ack.Domain}}
		}
	}
	return true
}

// splitBatch holds back the members that would fail a batch on account of
// an earlier member: an expectation on a subject an earlier member writes
// (the server refuses it inside a batch), or an earlier member's message
// id. Sent after the batch, they get their real answer (a conflict, or a
// duplicate) from the state the batch left.
func splitBatch(group []*pendingPub) (batch, held []*pendingPub) {
	written := make(map[string]bool, len(group))
	ids := make(map[string]bool, len(group))
	for _, p := range group {
		h := p.msg.Header
		guard := ""
		if h.Get(jetstream.ExpectedLastSubjSeqHeader) != "" {
			guard = p.msg.Subject
			if g := h.Get(jetstream.ExpectedLastSubjSeqSubjHeader); g != "" {
				guard = g
			}
		}
		id := h.Get(jetstream.MsgIDHeader)
		if (guard != "" && written[guard]) || (id != "" && ids[id]) {
			held = append(held, p)
			continue
		}
		written[p.msg.Subject] = true
		if id != "" {
			ids[id] = true
		}
		batch = append(batch, p)
	}
	return batch, held
}
