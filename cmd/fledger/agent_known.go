package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/projections"
)

// A read of an agent the ledger has no event of is an error (exit status
// 1), worded as explain words a turn it cannot find: "no agent nobody in
// this ledger (agents: alpha, beta)" — an empty answer would read as "this
// agent did nothing". Commands that write (serve, config apply, auth
// order set, run) make a new agent, and are not checked.

// unknownAgent is the error for agent, listing the ledger's agents.
func unknownAgent(agent string, agents []string) error {
	slices.Sort(agents)
	list := strings.Join(agents, ", ")
	if list == "" {
		list = "none"
	}
	return fmt.Errorf("no agent %s in this ledger (agents: %s)", cellText(agent), cellText(list))
}

// projAgentKnown refuses agent ("" = every agent: nil) when the
// projection, caught up by the command, has no event of it. A projection
// that is not the whole stream (--no-catch-up, or --at: the state as of a
// time, before an agent's first event perhaps) answers for what it holds:
// an agent it lacks is an empty answer there, not an error.
func projAgentKnown(ctx context.Context, db *projections.DB, pf *projectionFlags, agent string) error {
	if agent == "" || pf.noCatchUp || pf.at != "" {
		return nil
	}
	agents, err := db.ActiveAgents(ctx)
	if err != nil || slices.Contains(agents, agent) {
		return err
	}
	return unknownAgent(agent, agents)
}

// ledgerAgentKnown refuses agent ("" = every agent: nil) when the stream
// holds no message of it (one look at the last sequence of its
// subjects); only then is the stream read, to list the agents it holds.
func ledgerAgentKnown(ctx context.Context, st events.Store, agent string) error {
	if agent == "" {
		return nil
	}
	known, err := engine.AgentInLedger(ctx, st, agent)
	if err != nil || known {
		return err
	}
	var agents []string
	for ev, err := range st.Read(ctx, 1) {
		if err != nil {
			// An undecodable message names no agent; a store error ends
			// the listing, not the refusal.
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		if !slices.Contains(agents, ev.Agent) {
			agents = append(agents, ev.Agent)
		}
	}
	return unknownAgent(agent, agents)
}

// newAgentProblem is, for a command that writes to agents (serve, config
// apply), why the rule refuses the first agent id it refuses while the embedded data
// directory holds no ledger yet — no earlier build can have stored it, so
// it is refused before the store (and its directory) is created; "" and
// nil otherwise. With a ledger, or with --nats, the store decides
// (engine.CheckWritableAgent: an agent it holds goes on). The error reads
// after "agent", as engine.ValidateAgent's.
func newAgentProblem(g *globals, agents ...string) error {
	if g.NATSURL != "" || g.checkLedger() == nil {
		return nil
	}
	for _, a := range agents {
		if a == "" {
			continue // serve names its place in the list ("agent 2 of 2 is empty")
		}
		if err := engine.ValidateAgent(a); err != nil {
			return err
		}
	}
	return nil
}
