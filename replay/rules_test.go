package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// History is forever: one ledger holds a turn an earlier build decided
// (rule revision 1: a format error advanced to the fallback, which
// answered) and the same turn decided by this build (revision 2: the
// format error stops it). Verify re-decides each by its recorded revision
// and both match; the revision-1 turn is stored without rules, as the
// earlier builds stored it.
func TestRules_EachTurnVerifiesByItsRecordedRevision(t *testing.T) {
	st := openStore(t)
	ctx := testutil.Context(t)
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	format := engine.CallerFunc(func(_ context.Context, r engine.CallRequest) (engine.Answer, error) {
		if r.Provider == "anthropic" {
			return engine.Answer{}, &classify.ProviderError{Provider: "anthropic", Status: 400, Code: "invalid_request_error",
				Message: `Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.tool_use.id: String should match pattern"}}`}
		}
		return engine.Answer{Text: "ok"}, nil
	})
	clock := testutil.NewManualClock(testutil.T0)
	run := func(rules policy.Rules, turn string) (*engine.TurnResult, error) {
		e, err := engine.New(ctx, st, "main", engine.WithClock(clock), engine.WithRules(rules))
		testutil.NoError(t, err)
		defer e.Close()
		_, _, err = e.ApplyConfig(ctx, "test", l)
		testutil.NoError(t, err)
		return e.RunTurn(ctx, engine.TurnRequest{TurnID: turn, Session: "s1"}, format)
	}
	old, err := run(policy.RulesV1, "t-old")
	testutil.NoError(t, err)
	if old.Outcome != engine.OutcomeSucceeded || old.AnsweredBy.Provider != "openai" {
		t.Fatalf("revision 1 turn %+v", old)
	}
	_, err = run(policy.CurrentRules, "t-new")
	var stop *engine.StoppedError
	if !errors.As(err, &stop) || stop.Reason != policy.ReasonFormat {
		t.Fatalf("revision 2 turn: %v", err)
	}
	for _, ev := range old.Events {
		if ts, ok := ev.Data.(events.TurnStarted); ok && ts.Rules != 0 {
			t.Fatalf("revision 1 stored as rules %d", ts.Rules)
		}
	}
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() || rep.Checked[replay.DecisionStart] != 2 {
		t.Fatalf("verify: %s", dumpReport(t, rep))
	}
}
