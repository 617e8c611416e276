package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// Session maintenance is a decision like any other: verify re-decides
// each SessionPruned on the fold at its basis (the session's activity,
// its running turns, the recorded age and the event's time) and reports
// one that does not follow — here a prune of a session active a day
// before, forged after a real prune of a stale one.
func TestVerify_SessionPruned(t *testing.T) {
	ctx := testutil.Context(t)
	st := openStore(t)
	e, _ := twoProviderEngine(t, ctx, st)
	clock := e.Clock().(*testutil.ManualClock)
	gpt := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	_, err := e.SelectModel(ctx, "s-stale", gpt, string(policy.SourceUser), nil, "")
	testutil.NoError(t, err)
	clock.Advance(30 * 24 * time.Hour)
	_, err = e.SelectModel(ctx, "s-live", gpt, string(policy.SourceUser), nil, "")
	testutil.NoError(t, err)
	clock.Advance(24 * time.Hour)
	rep, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * 24 * time.Hour})
	testutil.NoError(t, err)
	if len(rep.Pruned) != 1 || rep.Pruned[0].Session != "s-stale" {
		t.Fatalf("pruned %+v, want s-stale", rep.Pruned)
	}
	v, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !v.OK() || v.Checked[replay.DecisionSession] != 3 {
		t.Fatalf("verify of a real prune: ok %v, checked %v, divergences %+v", v.OK(), v.Checked, v.Divergences)
	}

	forged := events.New("main", "s-live", clock.Now(), events.SessionPruned{Session: "s-live", Reason: policy.PruneReasonStale,
		LastActiveAt: events.Millis(testutil.T0), PruneAfterMs: (30 * 24 * time.Hour).Milliseconds()})
	_, err = st.Append(context.Background(), events.MustSubject("main", events.AggSession, "s-live"), events.AnySeq, forged)
	testutil.NoError(t, err)
	v, err = replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if v.OK() || len(v.Divergences) != 1 {
		t.Fatalf("verify of a forged prune: ok %v, divergences %+v", v.OK(), v.Divergences)
	}
	d := v.Divergences[0]
	if d.Session != "s-live" || d.Decision != replay.DecisionSession || d.Type != "SessionPruned" || !strings.Contains(d.Message, "does not produce") {
		t.Fatalf("divergence %+v", d)
	}
}

// explain --session words a prune folded while a turn of the session
// ran as void (the fold removed nothing), and a later one as a prune.
func TestExplainTimeline_VoidPrune(t *testing.T) {
	ctx := testutil.Context(t)
	st := openStore(t)
	e, _ := twoProviderEngine(t, ctx, st)
	clock := e.Clock().(*testutil.ManualClock)
	clock.Advance(31 * 24 * time.Hour)
	_, err := e.BeginTurn(ctx, engine.TurnRequest{TurnID: "t1", Session: "s1"})
	testutil.NoError(t, err)
	prune := func() {
		ev := events.New("main", "s1", clock.Now(), events.SessionPruned{Session: "s1", Reason: policy.PruneReasonStale,
			LastActiveAt: events.Millis(testutil.T0), PruneAfterMs: (30 * 24 * time.Hour).Milliseconds()})
		_, err := st.Append(ctx, events.MustSubject("main", events.AggSession, "s1"), events.AnySeq, ev)
		testutil.NoError(t, err)
	}
	prune()
	_, err = e.ReportOutcome(ctx, "t1", engine.AttemptReport{Attempt: 1, OK: true})
	testutil.NoError(t, err)
	prune()
	tl, err := replay.ExplainTimeline(ctx, st, "main", "s1", time.Time{}, time.Time{})
	testutil.NoError(t, err)
	var cmds []string
	for _, en := range tl.Entries {
		if en.Kind == "command" {
			cmds = append(cmds, en.Text)
		}
	}
	if len(cmds) != 2 || !strings.Contains(cmds[0], "void: turn t1 of the session was running") || strings.Contains(cmds[1], "void") ||
		!strings.Contains(cmds[1], "session pruned by maintenance") {
		t.Fatalf("commands %q", cmds)
	}
}
