package replay

import (
	"context"
	"fmt"
	"time"
)

// MomentLookAhead is how many commits after the first one stamped later
// than a moment [MomentAt] reads to find commits it leaves out although
// they are stamped at or before the moment.
const MomentLookAhead = 1024

// Moment is where the state as of a time ends in the stream: the commits
// before the first one stamped after the time (the stream's order is the
// order things were decided in; the stamps are each writer's clock).
type Moment struct {
	// Seq is the last commit of the state (0 = none: the first commit is
	// stamped after the time).
	Seq uint64
	// StopSeq and StopAt are the first commit stamped after the time, the
	// one the state stops before (0 = none: every commit is at or before
	// the time).
	StopSeq uint64
	StopAt  time.Time
	// Read is how many commits after StopSeq were read (MomentLookAhead
	// at most); LeftOut counts those stamped at or before the time, yet
	// not in the state, and LastLeftOut is the last of them. Writers whose
	// clocks disagree stamp so.
	Read        int
	LeftOut     int
	LastLeftOut uint64
}

// MomentAt finds the state as of t in src (see [Moment]).
func MomentAt(ctx context.Context, src Source, t time.Time) (Moment, error) {
	return momentAt(ctx, src, t, "")
}

// MomentAtAgent is [MomentAt] for one agent's state: only agent's commits
// stop it or count as left out (its state is folded from its commits
// alone). Several agents' clocks, or a scenario run twice on one virtual
// clock, stamp a stream out of order; one agent's commits are in its
// own order, so the cut of the whole stream would leave out the later
// agent's history.
func MomentAtAgent(ctx context.Context, src Source, t time.Time, agent string) (Moment, error) {
	return momentAt(ctx, src, t, agent)
}

// momentAt is MomentAt over agent's commits only ("" = every commit).
// Seq is the last commit before the stop, of any agent: the state of the
// agent is the same at any sequence between its own commits.
func momentAt(ctx context.Context, src Source, t time.Time, agent string) (Moment, error) {
	var m Moment
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		if agent != "" && (c.Err != nil || c.agent() != agent) {
			switch {
			case m.StopSeq == 0:
				m.Seq = c.Seq
			case m.Read == MomentLookAhead:
				return errStop
			default:
				m.Read++
			}
			return nil
		}
		if m.StopSeq == 0 {
			if c.Err == nil && len(c.Events) > 0 && c.Events[0].At.After(t) {
				m.StopSeq, m.StopAt = c.Seq, c.Events[0].At
				return nil
			}
			m.Seq = c.Seq
			return nil
		}
		if m.Read == MomentLookAhead {
			return errStop
		}
		m.Read++
		if c.Err == nil && len(c.Events) > 0 && !c.Events[0].At.After(t) {
			m.LeftOut++
			m.LastLeftOut = c.Seq
		}
		return nil
	})
	return m, err
}

// Warning is a line for people when the state leaves out commits stamped
// at or before the time ("" when it leaves none out); flag names the
// option the time came from.
func (m Moment) Warning(flag string, t time.Time) string {
	if m.LeftOut == 0 {
		return ""
	}
	are, them := "are", "the last at sequence"
	if m.LeftOut == 1 {
		are, them = "is", "at sequence"
	}
	return fmt.Sprintf("%s %s: the state ends at sequence %d, before sequence %d stamped %s; %d of the %d commits after it %s stamped at or before %s (%s %d) and left out: the writers' clocks disagree (use --to-seq for an exact cut)",
		flag, t.UTC().Format(time.RFC3339Nano), m.Seq, m.StopSeq, m.StopAt.UTC().Format(time.RFC3339Nano),
		m.LeftOut, m.Read, are, t.UTC().Format(time.RFC3339Nano), them, m.LastLeftOut)
}
