package replay

import (
	"container/heap"
	"fmt"
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
}

func (l *lookahead) push(c *commit) {
	b := basisOf(c)
	if b < l.folded {
		// Its basis was folded past already (it lies more than the window
		// after it): check it on the state just before it, and say so.
		l.v.note("seq %d was decided on stream position %d, more than the verify window before it: checked on the state just before it", c.Seq, b)
		b = c.Seq - 1
	}
	l.queue = append(l.queue, c)
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
