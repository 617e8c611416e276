package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/termtext"
	"github.com/fledger/fledger/projections"
)

// Shell completion (cobra's `fledger completion bash|zsh|fish|powershell`)
// completes fixed values (event types, --format, --outcome, --reason) from
// the tables below, and agents and turn ids from the projection database
// the command would read — as it is: nothing is started, caught up or
// created, and any failure (no database yet, a locked or older one)
// completes nothing.

// completionTimeout bounds one lookup in the projection database.
const completionTimeout = 500 * time.Millisecond

// recentTurnIDs is how many turn ids a completion offers: the most
// recently started.
const recentTurnIDs = 100

// completeValues completes exactly values, never file names.
func completeValues(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// eventTypeValues are the catalog's event types (events --type).
func eventTypeValues() []string { return events.NewCatalogRegistry().Types() }

// reasonValues are the failure reasons (decisions --reason).
func reasonValues() []string { return events.Spellings(events.Reasons) }

// outcomeValues are a turn's outcomes (turns --outcome).
var outcomeValues = []string{projections.OutcomeSucceeded, projections.OutcomeExhausted,
	projections.OutcomeStopped, projections.OutcomeSwitched, projections.OutcomeUnfinished}

// completeFromProjections registers, on every command of the tree under
// root, completion of --agent (the agents in the projections) and --turn
// (recent turn ids).
func completeFromProjections(root *cobra.Command, g *globals) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("agent") != nil {
			_ = c.RegisterFlagCompletionFunc("agent", completeAgents(g))
		}
		if c.Flags().Lookup("turn") != nil {
			_ = c.RegisterFlagCompletionFunc("turn", completeTurnIDs(g))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeAgents completes the agents the projections know.
func completeAgents(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		withCompletionDB(cmd, g, func(ctx context.Context, db *projections.DB) {
			agents, err := db.Agents(ctx)
			if err == nil {
				out = slices.DeleteFunc(agents, needsEscape)
			}
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTurnIDs completes the ids of the most recently started turns
// (of --agent when given) that start with what is typed, most recent
// first, each described by its agent, session, start and outcome. An id
// several agents have is offered once, described by all of them (explain
// then needs --agent).
func completeTurnIDs(g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		agent, _ := cmd.Flags().GetString("agent")
		withCompletionDB(cmd, g, func(ctx context.Context, db *projections.DB) {
			refs, err := db.RecentTurns(ctx, agent, toComplete, recentTurnIDs)
			if err != nil {
				return
			}
			out = turnCompletions(refs)
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// turnCompletions is one completion per turn id of refs (most recent
// first), described by the most recent turn of that id, or, when several
// agents have it, by their names and "--agent AGENT picks one". A turn id
// holding a control character is left out (the shell would insert it
// raw, or its escaped text, which names no turn), and descriptions are
// escaped ([termtext.Line]): completion output is "value<TAB>desc" lines.
func turnCompletions(refs []projections.TurnRef) []cobra.Completion {
	var ids []string
	byID := map[string][]projections.TurnRef{}
	for _, r := range refs {
		if needsEscape(r.TurnID) {
			continue
		}
		if byID[r.TurnID] == nil {
			ids = append(ids, r.TurnID)
		}
		byID[r.TurnID] = append(byID[r.TurnID], r)
	}
	out := make([]cobra.Completion, 0, len(ids))
	for _, id := range ids {
		rs := byID[id]
		var agents []string
		for _, r := range rs {
			if !slices.Contains(agents, r.Agent) {
				agents = append(agents, r.Agent)
			}
		}
		r := rs[0]
		desc := "agent " + r.Agent + ", session " + r.SessionID + ", started " + projTime(r.StartedAt) + ", " + r.Outcome
		if len(agents) > 1 {
			slices.Sort(agents)
			desc = "agents " + strings.Join(agents, ", ") + " (--agent AGENT picks one)"
		}
		out = append(out, cobra.CompletionWithDesc(id, termtext.Line(desc)))
	}
	return out
}

// needsEscape reports whether id holds a character [termtext.Line]
// escapes: such an id is not offered as a completion.
func needsEscape(id string) bool { return termtext.Line(id) != id }

// withCompletionDB runs f on the projection database cmd would read,
// opened read-only, when it exists. The global flags are as given on
// the command line being completed (PersistentPreRunE does not run for
// completion): NATS_URL stands for a missing --nats here too.
func withCompletionDB(cmd *cobra.Command, g *globals, f func(context.Context, *projections.DB)) {
	cg := *g
	if !cmd.Flags().Changed("nats") {
		cg.NATSURL = os.Getenv("NATS_URL")
	}
	cg.DataSet = cmd.Flags().Changed("data")
	var pf projectionFlags
	if fl := cmd.Flags().Lookup("db"); fl != nil {
		pf.db = fl.Value.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	db, err := projections.OpenReadOnly(ctx, pf.path(&cg))
	if err != nil {
		return
	}
	defer db.Close()
	f(ctx, db)
}
