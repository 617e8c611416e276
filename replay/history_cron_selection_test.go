package replay_test

import (
	"context"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
	"github.com/fledger/fledger/replay"
)

// History is forever: a session selection with source cron, which
// builds before the API refused it (a cron model is one turn's) stored
// from `POST …/model {"source":"cron"}`, still verifies (verify re-decides
// it with engine.SelectionDecision, which decides it as it was), the turn
// started from it verifies as a cron run, and the projection keeps the
// stored source.
func TestHistory_StoredCronSessionSelectionVerifiesAndProjects(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	e, _ := twoProviderEngine(t, ctx, st)
	gpt5 := events.ModelRef{Provider: "openai", Model: "gpt-5"}
	stored := events.New("main", "cr1", testutil.T0, events.SessionModelSelected{Session: "cr1", Model: gpt5, Source: "cron"})
	_, err := st.Append(ctx, events.MustSubject("main", events.AggSession, "cr1"), events.AnySeq, stored)
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))
	res, err := e.RunTurn(ctx, engine.TurnRequest{TurnID: "c1", Session: "cr1"}, engine.CallerFunc(func(context.Context, engine.CallRequest) (engine.Answer, error) {
		return engine.Answer{Text: "ok"}, nil
	}))
	testutil.NoError(t, err)
	if res.AnsweredBy != gpt5 {
		t.Fatalf("turn after a stored cron selection answered by %s, want openai/gpt-5", res.AnsweredBy)
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() || rep.Checked[replay.DecisionSession] != 1 || rep.Checked[replay.DecisionStart] != 1 {
		t.Fatalf("verify: %s", dumpReport(t, rep))
	}

	rows, err := rebuiltProjections(t, ctx, st).Sessions(ctx, projections.SessionFilter{Agent: "main", Session: "cr1"})
	testutil.NoError(t, err)
	if len(rows) != 1 || rows[0].ProviderOverride != "openai" || rows[0].ModelOverride != "gpt-5" || rows[0].ModelOverrideSource != "cron" {
		t.Fatalf("projected session rows %+v, want openai/gpt-5 source cron", rows)
	}
}
