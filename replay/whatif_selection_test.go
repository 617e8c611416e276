package replay_test

import (
	"context"
	"testing"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// A cron turn after a user /model of another model, whose first call is overloaded and whose
// retry answers, re-decided by what-if under the same config changes
// nothing: the simulation walks payloads with no start sequence, and a
// rule-revision-5 turn derives no live switch from the selection its
// start already held (it did, with the start's sequence unknown, before
// the review's fix).
func TestWhatIf_TurnAfterAUserSelectionUnderItsOwnConfig(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	e, l := twoProviderEngine(t, ctx, st)
	_, err := e.SelectModel(ctx, "s1", events.ModelRef{Provider: "openai", Model: "gpt-5"}, "user", nil, "")
	testutil.NoError(t, err)
	calls := 0
	// A cron run on claude (its configured fallbacks after it): the
	// session's user selection is not its model.
	cron := &policy.CronPayload{Model: events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}}
	res, err := e.RunTurn(ctx, engine.TurnRequest{TurnID: "t1", Session: "s1", Cron: cron}, engine.CallerFunc(func(context.Context, engine.CallRequest) (engine.Answer, error) {
		if calls++; calls == 1 {
			return engine.Answer{}, &classify.ProviderError{Status: 529, Message: "Overloaded"}
		}
		return engine.Answer{Text: "ok"}, nil
	}))
	testutil.NoError(t, err)
	if res.Attempts != 2 {
		t.Fatalf("%d attempts, want 2 (the overloaded call, its retry)", res.Attempts)
	}
	rep, err := replay.WhatIf(ctx, st, &l.Policy, replay.WhatIfOptions{})
	testutil.NoError(t, err)
	if rep.Turns != 1 || len(rep.Changed) != 0 || rep.Unknown != 0 {
		t.Fatalf("what-if under the recorded config: %d turns, %d changed (%+v), %d unknown", rep.Turns, len(rep.Changed), rep.Changed, rep.Unknown)
	}
}
