package replay

import (
	"container/heap"
	"context"

	"github.com/fledger/fledger/engine"
)

// recheckLate re-decides the commits decided on a stream position more
// than the verify window before their place (a writer whose fold stood
// still, then appended what it had decided): a second pass folds the
// stream again from sequence 1 up to the latest of their bases and checks
// each on the fold of the stream up to its basis, as the first pass checks
// the others. Their divergences go to v's report; the pass reads only as
// far as the latest basis, once, however many commits are late.
func (v *verifier) recheckLate(ctx context.Context, src Source, late []dueCommit) error {
	if len(late) == 0 {
		return nil
	}
	var last uint64
	for _, d := range late {
		last = max(last, d.basis)
	}
	v.note("%d commit(s) were decided on a stream position more than the verify window before them (the first at seq %d, on position %d): re-decided at their basis in a second pass over sequences 1–%d",
		len(late), late[0].c.Seq, late[0].basis, last)
	due := basisHeap(late) // reorders late
	heap.Init(&due)
	// The first pass's folds are done with: let them go before folding
	// again, and fold only the agents of the late commits.
	v.folds = map[string]*engine.Fold{}
	agents := map[string]bool{}
	for _, d := range late {
		if d.c.Err == nil {
			agents[d.c.agent()] = true
		}
	}
	p := &verifier{rep: v.rep, folds: map[string]*engine.Fold{}, seen: v.seen}
	err := walk(ctx, src, 1, last, func(c *commit) error {
		for len(due) > 0 && due[0].basis < c.Seq {
			p.checkCommit(heap.Pop(&due).(dueCommit).c)
		}
		if c.Err == nil && agents[c.agent()] {
			p.fold(c.agent()).Apply(c.Seq, "", c.Events)
		}
		return nil
	})
	for len(due) > 0 && err == nil {
		p.checkCommit(heap.Pop(&due).(dueCommit).c)
	}
	return err
}
