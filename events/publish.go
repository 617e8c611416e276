package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// Group commit. With fsync on every write (the default) the server syncs
// each published message on its own, so concurrent appends published one
// by one stay at the disk's fsync rate however many turns run. An ADR-50
// atomic batch is written and synced once, whatever its size, but costs a
// fixed 3–4 fsyncs of staging (the server stages each R1 batch in a
// temporary file store); measured on the project's machine, plain and
// pipelined publishes win below about 8 messages, batches above, and the
// stream's single ingest loop makes one large batch cheaper than two
// smaller ones in flight at once. On a server that does not fsync every
// write batches lose at every size (batch_mode.go decides where they are
// used). So appends queue to a committer that sends one flush at a time:
//
//   - a flush of one message is a plain publish: a lone decision is sent
//     the moment it arrives and never waits for company;
//   - a flush of 2 to groupBatchMin-1 messages is pipelined (async
//     publishes, then every ack);
//   - a flush of groupBatchMin or more is one atomic batch (at most
//     groupBatchMax), its members answered from the commit's ack, where
//     atomic batches are used; pipelined elsewhere;
//   - an urgent append (a decision others wait on) skips the queue and
//     is sent at once, alone.
//
// Before a message joins a flush it is triaged against what this store
// has written: a message whose expectation is already stale (its guard
// has a newer message, acknowledged to this store) is answered with the
// conflict at once, without costing a batch; one whose guard is being
// written by the flush in flight (or by an earlier member of the same
// flush) waits for the next flush, where it is triaged again. A batch
// therefore fails only on another writer's commits (another instance), or
// a duplicate message id.
//
// A batch is all or nothing: when the server rejects it (a member's
// expectation failed, a duplicate message id) nothing is stored, and every
// member is re-sent on its own, pipelined, so each gets its own exact
// answer — only the real conflict fails. Every PubAck still means the
// message is on disk. A stream without AllowAtomicPublish (created by an
// earlier fledger) gets pipelined flushes only.
const (
	groupBatchMin = 8
	groupBatchMax = 256
	groupInflight = 1
	codeAtomicOff = 10174 // atomic publish is disabled on the stream (a code jetstream does not export)
)

// GroupStats counts what the committer did ([Store] implementations that
// group commits report them through [GroupCommitStats]).
type GroupStats struct {
	// Flushes by kind: Single (a plain publish), Pipelined (2 or more
	// async publishes), Batches (atomic batches) and BatchedMsgs (their
	// members); Fallbacks counts rejected batches whose members were
	// re-sent one by one.
	Single, Pipelined, Batches, BatchedMsgs, Fallbacks uint64
	// AtomicBatches: flushes of groupBatchMin commits or more are sent
	// as atomic batches (false: pipelined); BatchesWhy says why
	// ([WithAtomicBatches]).
	AtomicBatches bool
	BatchesWhy    string
}

// GroupCommitStats returns st's group-commit counters (zero when st does
// not group commits).
func GroupCommitStats(st Store) GroupStats {
	if s, ok := Unwrap(st).(*store); ok && s.group != nil {
		return s.group.stats()
	}
	return GroupStats{}
}

// noPubRetry turns off the jetstream package's own re-send of a publish
// nobody received (2 tries 250 ms apart): the store retries unanswered
// sends itself, within its retry time and attempt bound (unavailable.go).
var noPubRetry = jetstream.WithRetryAttempts(0)

// publish sends one commit message and waits for its PubAck, through the
// committer when the store groups commits.
func (s *store) publish(ctx context.Context, msg *nats.Msg, urgent bool) (*jetstream.PubAck, error) {
	if s.group == nil {
		return s.js.PublishMsg(ctx, msg, noPubRetry)
	}
	return s.group.publish(ctx, msg, urgent)
}

type pendingPub struct {
	msg  *nats.Msg
	done chan pubResult
	// guard and expected are the message's expectation (guard "" = none).
	guard    string
	expected uint64
}

func newPending(msg *nats.Msg) *pendingPub {
	p := &pendingPub{msg: msg, done: make(chan pubResult, 1)}
	if v := msg.Header.Get(jetstream.ExpectedLastSubjSeqHeader); v != "" {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			p.guard, p.expected = msg.Subject, n
			if g := msg.Header.Get(jetstream.ExpectedLastSubjSeqSubjHeader); g != "" {
				p.guard = g
			}
		}
	}
	return p
}

type pubResult struct {
	ack *jetstream.PubAck
	err error
}

type committer struct {
	js      jetstream.JetStream
	timeout time.Duration
	atomic  atomic.Bool

	mu    sync.Mutex
	queue []*pendingPub
	// known is the last sequence of recently written subjects (from this
	// store's acks), knownOrder their order of writing, for eviction;
	// inflight counts the messages sent per subject and not answered yet.
	known      map[string]uint64
	knownOrder []knownWrite
	knownNext  int // once knownOrder is full: the index of its oldest entry
	inflight   map[string]int
	wake       chan struct{}
	slots      chan struct{}
	quit       chan struct{}
	wg         sync.WaitGroup

	single, pipelined, batches, batched, fallbacks atomic.Uint64
	// why says why flushes are or are not atomic batches (batch_mode.go);
	// onPipelinedBatch, when set, runs at each flush of groupBatchMin or
	// more sent pipelined (open.go logs the choice once from it).
	why              atomic.Pointer[string]
	onPipelinedBatch func()
}

// newCommitter starts a committer on js that sends atomic batches when
// batches is set, why saying why (or why not); onPipelinedBatch (may be
// nil) runs at each flush that would have been a batch.
func newCommitter(js jetstream.JetStream, timeout time.Duration, batches bool, why string, onPipelinedBatch func()) *committer {
	c := &committer{js: js, timeout: timeout, wake: make(chan struct{}, 1),
		slots: make(chan struct{}, groupInflight), quit: make(chan struct{}),
		known: map[string]uint64{}, inflight: map[string]int{}, onPipelinedBatch: onPipelinedBatch}
	c.atomic.Store(batches)
	c.why.Store(&why)
	c.wg.Add(1)
	go c.run()
	return c
}

func (c *committer) stats() GroupStats {
	return GroupStats{Single: c.single.Load(), Pipelined: c.pipelined.Load(), Batches: c.batches.Load(),
		BatchedMsgs: c.batched.Load(), Fallbacks: c.fallbacks.Load(), AtomicBatches: c.atomic.Load(), BatchesWhy: *c.why.Load()}
}

// publish queues msg and waits for its PubAck. When ctx ends first the
// message may still be stored: the outcome is unknown. An urgent message
// skips the queue: it is triaged and sent at once, alone.
func (c *committer) publish(ctx context.Context, msg *nats.Msg, urgent bool) (*jetstream.PubAck, error) {
	p := newPending(msg)
	if urgent {
		return c.publishNow(ctx, p)
	}
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

// publishNow sends p alone, now, without waiting for a flush slot.
func (c *committer) publishNow(ctx context.Context, p *pendingPub) (*jetstream.PubAck, error) {
	c.mu.Lock()
	if p.guard != "" {
		if last := c.lastOf(p.guard); last > p.expected {
			c.mu.Unlock()
			return nil, &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence,
				Description: "wrong last sequence: " + strconv.FormatUint(last, 10)}
		}
	}
	c.inflight[p.msg.Subject]++
	c.mu.Unlock()
	c.single.Add(1)
	ack, err := c.js.PublishMsg(ctx, p.msg, noPubRetry)
	c.mu.Lock()
	c.answeredLocked(p, ack)
	c.mu.Unlock()
	return ack, err
}

func (c *committer) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run hands queued messages to flushes, at most groupInflight at a time:
// while one is busy, arrivals gather into the next group.
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
			group := c.take()
			if len(group) == 0 {
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

// take triages the queue (see the package comment above) and returns the
// next flush's messages, marked in flight; messages it holds stay queued.
func (c *committer) take() []*pendingPub {
	c.mu.Lock()
	defer c.mu.Unlock()
	var group, keep []*pendingPub
	ids := map[string]bool{}
	for _, p := range c.queue {
		if len(group) == groupBatchMax {
			keep = append(keep, p)
			continue
		}
		if p.guard != "" {
			if last := c.lastOf(p.guard); last > p.expected {
				p.done <- pubResult{err: &jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence,
					Description: "wrong last sequence: " + strconv.FormatUint(last, 10)}}
				continue
			}
			if c.writing(p.guard) {
				keep = append(keep, p)
				continue
			}
		}
		id := p.msg.Header.Get(jetstream.MsgIDHeader)
		if id != "" && ids[id] {
			keep = append(keep, p) // a batch refuses a repeated id: next flush
			continue
		}
		ids[id] = true
		c.inflight[p.msg.Subject]++
		group = append(group, p)
	}
	c.queue = keep
	return group
}

// knownWrite is one entry of committer.knownOrder.
type knownWrite struct {
	subject string
	seq     uint64
}

// knownMax bounds how many written subjects the committer remembers: only
// recent writes can make a fresh expectation stale.
const knownMax = 16384

// answered records p's outcome: its subject is no longer in flight and,
// when stored, is known at its sequence. Call with mu held.
func (c *committer) answeredLocked(p *pendingPub, ack *jetstream.PubAck) {
	subj := p.msg.Subject
	if c.inflight[subj]--; c.inflight[subj] <= 0 {
		delete(c.inflight, subj)
	}
	// A duplicate's sequence is the stored original's, which may be on
	// another subject (a step message id shared across subjects).
	if ack == nil || ack.Duplicate || ack.Sequence <= c.known[subj] {
		return
	}
	c.known[subj] = ack.Sequence
	w := knownWrite{subj, ack.Sequence}
	if len(c.knownOrder) < knownMax {
		c.knownOrder = append(c.knownOrder, w)
		return
	}
	// Full: knownOrder is a ring, knownNext its oldest entry, which the
	// new one replaces (no copy of the whole order per append).
	old := c.knownOrder[c.knownNext]
	if c.known[old.subject] == old.seq {
		delete(c.known, old.subject)
	}
	c.knownOrder[c.knownNext] = w
	c.knownNext = (c.knownNext + 1) % knownMax
}

// lastOf is the last known sequence of guard: a subject, or a filter with
// '*' tokens matched against the tokens fledger writes (profile guards).
func (c *committer) lastOf(guard string) uint64 {
	if !strings.Contains(guard, "*") {
		return c.known[guard]
	}
	var last uint64
	for _, s := range expandGuard(guard) {
		last = max(last, c.known[s])
	}
	return last
}

// writing reports whether a message on guard (or a subject it matches) is
// in flight.
func (c *committer) writing(guard string) bool {
	if !strings.Contains(guard, "*") {
		return c.inflight[guard] > 0
	}
	for _, s := range expandGuard(guard) {
		if c.inflight[s] > 0 {
			return true
		}
	}
	return false
}

// expandGuard lists the subjects fledger writes that a filter of the form
// fledger.<agent>.*.<key> matches (one per subject token); other filters
// expand to nothing (they are never triaged, only sent).
func expandGuard(guard string) []string {
	parts := strings.Split(guard, ".")
	if len(parts) != 4 || parts[2] != "*" {
		return nil
	}
	out := make([]string, len(subjectTokens))
	for i, tok := range subjectTokens {
		out[i] = parts[0] + "." + parts[1] + "." + string(tok) + "." + parts[3]
	}
	return out
}

// answer delivers r to p and records it.
func (c *committer) answer(p *pendingPub, r pubResult) {
	c.mu.Lock()
	c.answeredLocked(p, r.ack)
	c.mu.Unlock()
	p.done <- r
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
		ack, err := c.js.PublishMsg(ctx, group[0].msg, noPubRetry)
		cancel()
		c.answer(group[0], pubResult{ack, err})
	case len(group) < groupBatchMin:
		c.sendPipelined(group)
	case !c.atomic.Load():
		if c.onPipelinedBatch != nil {
			c.onPipelinedBatch()
		}
		c.sendPipelined(group)
	default:
		if !c.sendBatch(group) {
			c.fallbacks.Add(1)
			c.sendPipelined(group)
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
			c.answer(p, pubResult{err: err})
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
			c.answer(group[i], pubResult{ack: ack})
		case err := <-f.Err():
			c.answer(group[i], pubResult{err: err})
		case <-timer.C:
			for j, p := range group[i:] {
				if futs[i+j] != nil {
					c.answer(p, pubResult{err: fmt.Errorf("no ack within %v (the commit may be stored): %w", c.timeout, context.DeadlineExceeded)})
				}
			}
			return
		}
	}
}

// sendBatch publishes group as one atomic batch and answers every member
// from the commit's ack (member i of n is stored at ack.seq-n+1+i). It
// returns false, having answered nobody, when the batch was not stored.
func (c *committer) sendBatch(group []*pendingPub) bool {
	n := len(group)
	msgs := make([]*nats.Msg, n)
	for i, p := range group {
		// Copies: the batch publisher adds the batch headers, and a
		// refused batch's members are re-sent without them.
		msgs[i] = &nats.Msg{Subject: p.msg.Subject, Data: p.msg.Data, Header: nats.Header{}}
		for k, v := range p.msg.Header {
			msgs[i].Header[k] = v
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// No flow-control ack on the first member: the batch is at most
	// groupBatchMax messages, sent on one connection, and one round trip
	// per batch is what group commit exists to save.
	ack, err := jetstreamext.PublishMsgBatch(ctx, c.js, msgs, jetstreamext.BatchFlowControl{AckTimeout: c.timeout})
	if err != nil {
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == codeAtomicOff {
			why := "the server refused atomic batch publish: " + apiErr.Description
			c.why.Store(&why)
			c.atomic.Store(false)
		}
		return false
	}
	c.batches.Add(1)
	c.batched.Add(uint64(n))
	for j, q := range group {
		c.answer(q, pubResult{ack: &jetstream.PubAck{Stream: ack.Stream, Sequence: ack.Sequence - uint64(n-1-j), Domain: ack.Domain}})
	}
	return true
}
