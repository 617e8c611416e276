package replay

import (
	"context"
	"errors"
	"iter"

	"github.com/fledger/fledger/events"
)

// Source is what replay reads: the stream in order from a sequence to its
// current end ([events.Store] implements it).
type Source interface {
	Read(ctx context.Context, from uint64) iter.Seq2[events.Event, error]
}

// commit is one stored message: every event of one decision.
type commit struct {
	Seq    uint64
	Events []events.Event
	// Err is set for a message that could not be decoded (Events empty).
	Err error
}

// agent is the agent the commit's events belong to (a commit is written
// by one engine for one agent).
func (c *commit) agent() string {
	if len(c.Events) == 0 {
		return ""
	}
	return c.Events[0].Agent
}

// errStop ends a walk early without error.
var errStop = errors.New("replay: stop")

// walk calls fn for each commit of src with sequence in [from, to] (to 0 =
// the end), in stream order. A *events.DecodeError is passed on as a
// commit with Err; any other read error ends the walk with it.
func walk(ctx context.Context, src Source, from, to uint64, fn func(c *commit) error) error {
	var cur *commit
	flush := func() error {
		if cur == nil {
			return nil
		}
		c := cur
		cur = nil
		return fn(c)
	}
	for ev, err := range src.Read(ctx, from) {
		if err != nil {
			var de *events.DecodeError
			if !errors.As(err, &de) {
				return err
			}
			if e := flush(); e != nil {
				return done(e)
			}
			if to > 0 && ev.Seq > to {
				return nil
			}
			if e := fn(&commit{Seq: ev.Seq, Err: err}); e != nil {
				return done(e)
			}
			continue
		}
		if to > 0 && ev.Seq > to {
			break
		}
		if cur != nil && cur.Seq != ev.Seq {
			if e := flush(); e != nil {
				return done(e)
			}
		}
		if cur == nil {
			cur = &commit{Seq: ev.Seq}
		}
		cur.Events = append(cur.Events, ev)
	}
	return done(flush())
}

func done(err error) error {
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
