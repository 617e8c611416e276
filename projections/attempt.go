package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
)

// run is one catch-up attempt with a fresh cache. Events are gathered per
// commit (they share a stream sequence) and a commit is folded only once
// it is complete and every type in it is known, so a batch never holds
// part of a commit and a failing commit leaves the batches before it
// committed.
func (p *Projector) run(ctx context.Context, src Source, to uint64) (res Result, err error) {
	base, err := p.db.Checkpoint(ctx)
	if err != nil {
		p.open.reset()
		return Result{}, err
	}
	a := &attempt{p: p, ctx: ctx, to: to, c: p.newCache(base), res: Result{From: base, To: base}}
	// The open turns follow the folds: on success every fold committed.
	defer func() { p.open.end(res.To, err) }()
	if to != 0 && base >= to {
		return a.res, nil
	}
	read, stop := pipelined(ctx, src, base+1, to)
	defer stop()
	for ev, rerr := range read {
		more, err := a.take(ev, rerr)
		if err != nil {
			// A batch still being written is waited for (it may commit);
			// its error came first.
			if werr := a.wait(); werr != nil {
				err = werr
			}
			return a.res, err
		}
		if !more {
			break
		}
	}
	err = a.finish()
	if werr := a.wait(); err == nil {
		err = werr
	}
	return a.res, err
}

// attempt is the state of one [Projector.run]: the cache, the commit
// being gathered and what the committed batches did.
type attempt struct {
	p   *Projector
	ctx context.Context
	to  uint64 // last sequence to fold (0 = the end of the stream)
	c   *cache
	res Result
	// folded is the sequence of the last commit folded into the cache,
	// commit the events of the one being gathered.
	folded uint64
	commit []events.Event
	// writing is the batch being written (nil: none).
	writing *flushJob
}

// take takes one read result: an event joins its commit (ending the one
// before), an error quarantines a message or a gap, or ends the attempt.
// It returns false when the attempt reached its target sequence.
func (a *attempt) take(ev events.Event, rerr error) (bool, error) {
	if rerr != nil {
		return a.takeError(rerr)
	}
	if a.to != 0 && ev.Seq > a.to {
		return false, nil
	}
	if len(a.commit) > 0 && ev.Seq != a.commit[0].Seq {
		if err := a.end(); err != nil {
			return false, err
		}
	}
	a.commit = append(a.commit, ev)
	return true, nil
}

// takeError quarantines a message the store cannot decode, or a run of
// missing sequences: recorded with the checkpoint, so a rebuild records
// the same, and folding goes on. Any other read error ends the attempt
// after flushing the complete commits folded so far.
func (a *attempt) takeError(rerr error) (bool, error) {
	var de *events.DecodeError
	if !errors.As(rerr, &de) || de.Seq == 0 {
		if err := a.end(); err != nil {
			return false, err
		}
		return false, a.fail(fmt.Errorf("projections: read the stream after sequence %d: %w", a.folded, rerr))
	}
	if a.to != 0 && de.Seq > a.to {
		return false, nil
	}
	if err := a.end(); err != nil {
		return false, err
	}
	q := *de
	if q.Gap() && a.to != 0 && q.Through > a.to {
		q.Through = a.to // the rest is found by the next catch-up
	}
	a.p.quarantine(a.c, &q)
	a.folded = max(q.Seq, q.Through)
	return true, a.flushIfFull()
}

// end folds the gathered commit, then flushes when the batch is full.
func (a *attempt) end() error {
	if len(a.commit) == 0 {
		return nil
	}
	if err := a.p.foldCommit(a.ctx, a.c, a.commit); err != nil {
		var ue *UnknownTypeError
		if errors.As(err, &ue) {
			return a.fail(err) // the cache holds none of this commit
		}
		return err // the cache may hold part of it: write nothing
	}
	a.folded = a.commit[0].Seq
	a.commit = a.commit[:0]
	return a.flushIfFull()
}

// finish folds the last commit and starts its flush (after a cancelled
// read, the complete commits before it); run waits for it.
func (a *attempt) finish() error {
	if err := a.end(); err != nil {
		return err
	}
	if err := a.ctx.Err(); err != nil {
		return a.fail(err)
	}
	return a.flush()
}

func (a *attempt) flushIfFull() error {
	if a.c.pending >= a.p.batch {
		return a.flush()
	}
	return nil
}

// fail writes the complete commits folded so far and returns err.
func (a *attempt) fail(err error) error {
	if ferr := a.flush(); ferr != nil {
		return ferr
	}
	if ferr := a.wait(); ferr != nil {
		return ferr
	}
	return err
}

// flush starts writing what the cache folded through a.folded as one
// transaction, once the batch before it committed (wait); folding goes on
// meanwhile.
func (a *attempt) flush() error {
	if err := a.wait(); err != nil {
		return err
	}
	if a.folded <= a.c.base {
		return nil
	}
	a.writing = a.p.startFlush(a.ctx, a.c, a.folded)
	return nil
}

// wait waits for the batch being written, if any, and adds it to the
// result once it committed.
func (a *attempt) wait() error {
	j := a.writing
	if j == nil {
		return nil
	}
	a.writing = nil
	if err := <-j.done; err != nil {
		return err
	}
	a.c.written()
	a.res.To = j.seq
	a.res.Commits += j.n.commits
	a.res.Events += j.n.events
	a.res.Skipped += j.n.skipped
	a.res.Quarantined += j.n.quarantined
	a.res.Batches++
	if a.p.progress != nil {
		a.p.progress(j.seq, a.to)
	}
	return nil
}
