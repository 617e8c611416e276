package replay

import (
	"container/heap"
	"fmt"

	"github.com/fledger/fledger/events"
)

// lookahead holds the commits verify has read but not yet folded, and
// re-decides each one when the fold reaches its basis: before the commit
// at sequence s is folded, every queued commit whose basis is below s is
// checked, so it sees exactly the fold of the stream up to its basis.
type lookahead struct {
	v *verifier
	// queue holds read commits in stream order; the first is the next to
	// fold.
	queue []*commit
	// due orders the queued commits not yet checked by basis.
	due basisHeap
	// folded is the sequence of the last commit folded (any agent).
	folded uint64
	// turnLast is the sequence of the last commit read of each turn
	// (agent + "\x00" + turn id).
	turnLast map[string]uint64
	// late are the commits whose basis lies more than the window before
	// them, for recheckLate.
	late []dueCommit
}

func (l *lookahead) push(c *commit) {
	if l.staleBasis(c) {
		return // reported; it is still folded, as every reader folds it
	}
	b := basisOf(c)
	l.queue = append(l.queue, c)
	if b < l.folded {
		// Its basis was folded past already (it lies more than the window
		// after it): folded here in its place, re-decided at its basis in
		// a second pass (recheckLate).
		l.late = append(l.late, dueCommit{basis: b, c: c})
		return
	}
	heap.Push(&l.due, dueCommit{basis: b, c: c})
}

// advance checks every commit due before the first queued one is folded,
// then folds it.
func (l *lookahead) advance() {
	head := l.queue[0]
	for len(l.due) > 0 && l.due[0].basis < head.Seq {
		d := heap.Pop(&l.due).(dueCommit)
		l.v.checkCommit(d.c)
	}
	l.queue[0] = nil
	l.queue = l.queue[1:]
	l.folded = head.Seq
	if head.Err == nil {
		l.v.fold(head.agent()).Apply(head.Seq, "", head.Events)
	}
}

// staleBasis reports (and records as a divergence) a commit whose
// recorded basis lies before an earlier commit of its own turn: the engine
// decides a turn's step only on a fold that holds the turn's previous
// decision, so such a commit was not decided where it stands — a stored
// commit sent again (without its message id) or forged. Re-deciding it on
// its basis would only repeat the original's check. It stays queued to be
// folded, as every reader folds it.
func (l *lookahead) staleBasis(c *commit) bool {
	if c.Err != nil || len(c.Events) == 0 {
		return false
	}
	if l.turnLast == nil {
		l.turnLast = map[string]uint64{}
	}
	var turn string
	for i := range c.Events {
		if ev := &c.Events[i]; ev.Aggregate == events.AggTurn {
			turn = ev.Agent + "\x00" + ev.Key
			break
		}
	}
	if turn == "" {
		return false
	}
	prev := l.turnLast[turn]
	l.turnLast[turn] = c.Seq
	b := c.Events[0].Basis
	if b == 0 || prev == 0 || b >= prev {
		return false
	}
	l.v.rep.Checked[DecisionUnexplained]++
	first := c.Events[0]
	for i := range c.Events {
		if c.Events[i].Aggregate == events.AggTurn {
			first = c.Events[i]
			break
		}
	}
	key := "turn:" + first.Agent + ":" + first.Key
	d := Divergence{Seq: c.Seq, Index: -1, Agent: first.Agent, Turn: first.Key, Decision: DecisionUnexplained, Type: first.Type,
		Message: fmt.Sprintf("recorded as decided on stream position %d, before this turn's decision at seq %d: not decided here (a stored commit sent again, or forged)", b, prev)}
	d.Recorded, _, _ = canonical(first.Data)
	l.v.diverge(d, key)
	l.queue = append(l.queue, c)
	return true
}

// basisOf is the stream position c's decision was taken on: its recorded
// basis, or (for commits written before bases were recorded, and decode
// failures) the position just before it. A basis at or after the commit
// itself cannot be true and is treated the same way.
func basisOf(c *commit) uint64 {
	if c.Err == nil && len(c.Events) > 0 {
		if b := c.Events[0].Basis; b > 0 && b < c.Seq {
			return b
		}
	}
	return c.Seq - 1
}

type dueCommit struct {
	basis uint64
	c     *commit
}

// basisHeap is a min-heap by basis, then stream sequence.
type basisHeap []dueCommit

func (h basisHeap) Len() int { return len(h) }
func (h basisHeap) Less(i, j int) bool {
	if h[i].basis != h[j].basis {
		return h[i].basis < h[j].basis
	}
	return h[i].c.Seq < h[j].c.Seq
}
func (h basisHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *basisHeap) Push(x any)   { *h = append(*h, x.(dueCommit)) }
func (h *basisHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// checkCommit verifies one commit on the fold of its agent as it stands.
func (v *verifier) checkCommit(c *commit) {
	if c.Err != nil {
		v.diverge(Divergence{Seq: c.Seq, Index: -1, Decision: DecisionDecode, Message: c.Err.Error()}, fmt.Sprintf("decode:%d", c.Seq))
		return
	}
	v.check(v.fold(c.agent()), c)
}
