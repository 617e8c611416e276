package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/fledger/fledger/events"
)

// FoldTarget is where [FoldAllTo] stops one agent's fold: the sequence
// (a snapshot's) and the finished turns kept.
type FoldTarget struct {
	Keep int
	Seq  uint64
}

// FoldAllTo is [FoldTo] for several agents in one read of the stream:
// each agent's fold is the state FoldTo(ctx, st, agent, t.Keep, t.Seq)
// gives, and the stream is read once, from sequence 1 to the highest
// target, not once per agent (`replay --verify` checks every agent's
// snapshot: a ledger of thousands of agents, one per scenario run, was
// read thousands of times). A commit is folded by its own agent's fold
// only; another agent's commit only moves a fold's position, which is set
// at the end to the last commit at or before its target, as a fold that
// saw every commit leaves it.
func FoldAllTo(ctx context.Context, st events.Store, targets map[string]FoldTarget) (map[string]*Fold, error) {
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		return nil, err
	}
	states := make(map[string]*state, len(targets))
	byPrefix := make(map[string]*state, len(targets))
	var top uint64
	for agent, t := range targets {
		if last < t.Seq {
			return nil, fmt.Errorf("engine: the stream ends at sequence %d, before %d (agent %q)", last, t.Seq, agent)
		}
		s := newState(agent)
		s.keep = max(t.Keep, 0)
		states[agent], byPrefix[s.prefix] = s, s
		top = max(top, t.Seq)
	}
	owner := func(subject string) *state {
		// "fledger.<agent>." is the subject up to its second dot.
		i := strings.IndexByte(subject, '.')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(subject[i+1:], '.')
		if j < 0 {
			return nil
		}
		return byPrefix[subject[:i+1+j+1]]
	}
	// gaps are the runs of missing sequences read: a fold whose target
	// lies in one stops before it, as FoldTo's does.
	var gaps [][2]uint64
	if top > 0 {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		decode := func(subject string) bool { return owner(subject) != nil }
		for c, err := range st.Follow(ctx, events.FollowOptions{From: 1, Decode: decode}) {
			if err != nil {
				return nil, fmt.Errorf("engine: fold %d agents to %d: %w", len(targets), top, err)
			}
			if c.Seq > top {
				break
			}
			if c.Err != nil && c.Err.Gap() {
				gaps = append(gaps, [2]uint64{c.Err.Seq, c.Err.Through})
				if c.Err.Through >= top {
					break
				}
				continue
			}
			if c.Subject == "" { // no agent's: every fold's own, as foldCommit takes it
				for agent, s := range states {
					if targets[agent].Seq >= c.Seq {
						s.applyFollowed(c)
					}
				}
			} else if s := owner(c.Subject); s != nil && targets[s.agent].Seq >= c.Seq {
				s.applyFollowed(c)
			}
			if c.Seq >= top {
				break
			}
		}
	}
	out := make(map[string]*Fold, len(states))
	for agent, s := range states {
		at := targets[agent].Seq
		for _, g := range gaps {
			if at >= g[0] && at <= g[1] {
				at = g[0] - 1
			}
		}
		s.mu.Lock()
		s.applied = max(s.applied, at)
		s.mu.Unlock()
		out[agent] = &Fold{st: s}
	}
	return out, nil
}
