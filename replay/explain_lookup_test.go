package replay_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// timelineStore holds incident-day as demo (session dm-alice),
// rate-limit-storm as other (session slack-dm-bob), then a stored auth
// order of main and one of demo, appended by hand inside dm-alice's range.
func timelineStore(t *testing.T) events.Store {
	t.Helper()
	st := openStore(t)
	runScenario(t, st, "incident-day", "demo")
	runScenario(t, st, "rate-limit-storm", "other")
	for _, o := range []struct {
		agent string
		at    time.Time
		ids   []string
	}{
		{"main", time.Date(2026, 3, 2, 9, 5, 0, 0, time.UTC), []string{"openai:a"}},
		{"demo", time.Date(2026, 3, 2, 9, 6, 0, 0, time.UTC), []string{"openai:b", "openai:a"}},
	} {
		ev := events.New(o.agent, "openai", o.at, events.AuthOrderSet{Provider: "openai", ProfileIDs: o.ids, By: "cli"})
		_, err := st.Append(context.Background(), events.MustSubject(o.agent, events.AggOrder, "openai"), events.AnySeq, ev)
		testutil.NoError(t, err)
	}
	return st
}

// A session's timeline holds its own commands and turns, and as context
// only the agent-wide commands of the agents it belongs to: main's stored
// order is in no timeline of demo's or other's sessions.
func TestExplainTimeline_OnlyTheSessionAndItsAgentsContext(t *testing.T) {
	st := timelineStore(t)
	for _, c := range []struct {
		name, agent, session string
		want                 []string
	}{
		{"dm-alice", "", "dm-alice", []string{
			"1 demo context: config sha256:abe83a769324d3eb5eaab12e92eee43df2c76388759e7223e53775b7f723c855 applied",
			"2 demo turn: storm",
			"12 demo turn: recovered",
			"14 demo turn: out-of-credit",
			"17 demo turn: while-disabled",
			"19 demo command: pin anthropic:personal cleared (replaced); pin → anthropic:work (user)",
			"20 demo turn: after-disable",
			"46 demo context: stored auth order of openai → openai:b, openai:a (by cli)",
		}},
		{"slack-dm-bob", "", "slack-dm-bob", []string{
			"22 other context: config sha256:bd1f9e218c57f83e4a3627b473aac687d1a5e199cd4c95bd005b69c5f234577e applied",
			"23 other turn: storm",
			"34 other turn: still-cooling",
		}},
		{"slack-dm-bob of other", "other", "slack-dm-bob", []string{
			"22 other context: config sha256:bd1f9e218c57f83e4a3627b473aac687d1a5e199cd4c95bd005b69c5f234577e applied",
			"23 other turn: storm",
			"34 other turn: still-cooling",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl, err := replay.ExplainTimeline(context.Background(), st, c.agent, c.session, time.Time{}, time.Time{})
			testutil.NoError(t, err)
			var got []string
			for _, e := range tl.Entries {
				text := e.Text
				if e.Turn != nil {
					text = e.Turn.TurnID
				}
				got = append(got, fmt.Sprintf("%d %s %s: %s", e.Seq, e.Agent, e.Kind, text))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// A turn or session explain cannot pick is a LookupError naming the
// stream's agents (or, for an id several agents have, those agents).
func TestExplain_LookupErrorsNameTheAgents(t *testing.T) {
	st := timelineStore(t)
	runScenario(t, st, "rate-limit-storm", "third")
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func() error
		want replay.LookupError
	}{
		{"unknown session", func() error {
			_, err := replay.ExplainTimeline(ctx, st, "", "nosuch", time.Time{}, time.Time{})
			return err
		}, replay.LookupError{Kind: replay.ErrSessionNotFound, ID: "nosuch", Agents: []string{"demo", "main", "other", "third"}}},
		{"another agent's session", func() error {
			_, err := replay.ExplainTimeline(ctx, st, "main", "dm-alice", time.Time{}, time.Time{})
			return err
		}, replay.LookupError{Kind: replay.ErrSessionNotFound, ID: "dm-alice", Agent: "main", Agents: []string{"demo", "main", "other", "third"}}},
		{"unknown turn", func() error {
			_, err := replay.Explain(ctx, st, "", "nope")
			return err
		}, replay.LookupError{Kind: replay.ErrTurnNotFound, ID: "nope", Agents: []string{"demo", "main", "other", "third"}}},
		{"a turn of several agents", func() error {
			_, err := replay.Explain(ctx, st, "", "still-cooling")
			return err
		}, replay.LookupError{Kind: replay.ErrAmbiguousTurn, ID: "still-cooling", Agents: []string{"other", "third"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			var le *replay.LookupError
			if !errors.As(err, &le) || !errors.Is(err, c.want.Kind) || !reflect.DeepEqual(*le, c.want) {
				t.Fatalf("got %#v, want %#v", err, c.want)
			}
		})
	}
}
