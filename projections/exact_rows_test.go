package projections_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// scripted answers calls from a fixed list of outcomes, recording each
// call as "provider/model@profile".
func scripted(calls *[]string, outs ...policy.Outcome) func(c *policy.Call) policy.Outcome {
	i := 0
	return func(c *policy.Call) policy.Outcome {
		*calls = append(*calls, fmt.Sprintf("%s/%s@%s", c.Provider, c.Model, c.ProfileID))
		o := outs[i]
		i++
		return o
	}
}

func TestExactRows_RotationsCooldownsDisableFallbacks(t *testing.T) {
	st, _ := openStore(t)
	g := newGen(t, st)
	var calls []string
	rl := outcome(policy.ReasonRateLimit, 429, "Rate limit reached")
	bill := outcome(policy.ReasonBilling, 402, "Your credit balance is too low")
	ok := outcome("", 0, "")
	g.turn("turn-1", "s1", scripted(&calls, rl, bill, ok), 10)
	g.now += 60_000
	g.turn("turn-2", "s1", scripted(&calls, outcome(policy.ReasonModelNotFound, 404, "model gpt-5 not found"), ok), 10)
	g.now += 5_000
	g.turn("turn-3", "s1", scripted(&calls), 0)
	t.Logf("calls: %v", calls)

	wantCalls := "[anthropic/claude@anthropic:a anthropic/claude@anthropic:a anthropic/claude@anthropic:b anthropic/claude@anthropic:b openai/gpt-5@openai:user]"
	if fmt.Sprint(calls) != wantCalls {
		t.Fatalf("calls %v, want %s (the deciders changed: update this test)", calls, wantCalls)
	}

	db := openDB(t, "")
	catchUp(t, db, st, 0)
	if os.Getenv("PRINT_DUMP") != "" {
		t.Log("\n" + dump(t, db))
	}
	ctx := context.Background()
	ms := func(off int64) projections.UnixMillis { return projections.UnixMillis(t0 + off) }

	// turn-1: a rate-limited (retried), then billing → a disabled 10 min,
	// rotation to b, which answers. turn-2 (+60 s): b model_not_found →
	// b cooled down 30 s for claude, fallback to openai/gpt-5, which
	// answers. turn-3: started, probing the primary, never finished.
	stats, err := db.UsageStats(ctx, projections.StatsFilter{})
	testutil.NoError(t, err)
	want := []projections.UsageStat{
		{Agent: "main", ProfileID: "anthropic:a", Provider: "anthropic", ErrorCount: 1, LastFailureAt: ms(1_364),
			FailureCounts: map[string]int{"billing": 1}, DisabledUntil: ms(601_364), DisabledReason: "billing",
			UpdatedAt: ms(1_364), LastSeq: 5},
		{Agent: "main", ProfileID: "anthropic:b", Provider: "anthropic", LastUsed: ms(2_164), LastProbeAt: ms(2_164),
			ErrorCount: 1, LastFailureAt: ms(62_464), FailureCounts: map[string]int{"model_not_found": 1},
			CooldownUntil: ms(92_464), CooldownReason: "model_not_found", CooldownModel: "claude",
			UpdatedAt: ms(62_464), LastSeq: 8},
		{Agent: "main", ProfileID: "openai:user", Provider: "openai", LastUsed: ms(63_264), LastProbeAt: ms(63_264),
			FailureCounts: map[string]int{}, UpdatedAt: ms(63_264), LastSeq: 9},
	}
	if !reflect.DeepEqual(stats, want) {
		t.Fatalf("usage_stats\n got %+v\nwant %+v", stats, want)
	}
	now := time.UnixMilli(t0 + 63_264).UTC()
	for i, w := range []string{"disabled for 8m 59s (billing)", "cooling down for 30s (model_not_found, model claude)", "ready"} {
		if got := stats[i].Status(now); got != w {
			t.Errorf("%s status %q, want %q", stats[i].ProfileID, got, w)
		}
	}

	sess, err := db.Sessions(ctx, projections.SessionFilter{})
	testutil.NoError(t, err)
	wantSess := []projections.SessionSelection{{Agent: "main", SessionKey: "s1",
		AuthProfileOverride: "anthropic:b", AuthProfileOverrideProvider: "anthropic", AuthProfileOverrideSource: "auto",
		FallbackNoticeSelectedModel: "anthropic/claude", FallbackNoticeActiveModel: "openai/gpt-5", FallbackNoticeReason: "model not found",
		UpdatedAt: ms(63_264), LastSeq: 9}}
	if !reflect.DeepEqual(sess, wantSess) {
		t.Fatalf("session_selection\n got %+v\nwant %+v", sess, wantSess)
	}

	turns, err := db.Turns(ctx, projections.TurnFilter{})
	testutil.NoError(t, err)
	type turnFacts struct {
		id, answered, profile, outcome string
		attempts                       int
		duration                       int64
	}
	var gotTurns []turnFacts
	for _, tr := range turns {
		gotTurns = append(gotTurns, turnFacts{tr.TurnID, tr.AnsweredBy, tr.AnsweredProfileID, tr.Outcome, tr.Attempts, tr.DurationMs})
	}
	wantTurns := []turnFacts{
		{"turn-1", "anthropic/claude", "anthropic:b", "succeeded", 3, 2_164},
		{"turn-2", "openai/gpt-5", "openai:user", "succeeded", 2, 1_100},
		{"turn-3", "", "", "unfinished", 1, 0},
	}
	if !reflect.DeepEqual(gotTurns, wantTurns) {
		t.Fatalf("turns\n got %+v\nwant %+v", gotTurns, wantTurns)
	}

	decs, err := db.Decisions(ctx, projections.DecisionFilter{})
	testutil.NoError(t, err)
	var gotDecs []string
	for _, d := range decs {
		gotDecs = append(gotDecs, fmt.Sprintf("%d.%d %s %s %s/%s %d/%d %s %d next=%s/%s step=%s→%s %s pos=%d",
			d.Seq, d.Idx, d.TurnID, d.Decision, d.CandidateProvider, d.CandidateModel, d.Attempt, d.Total, d.Reason, d.Status,
			d.NextCandidateProvider, d.NextCandidateModel, d.FallbackStepFromModel, d.FallbackStepToModel,
			d.FallbackStepFinalOutcome, d.FallbackStepChainPosition))
	}
	wantDecs := []string{
		"8.2 turn-2 candidate_failed anthropic/claude 1/3 model_not_found 404 next=openai/gpt-5 step=anthropic/claude→openai/gpt-5 next_fallback pos=1",
		"9.2 turn-2 candidate_succeeded openai/gpt-5 2/3  0 next=/ step=anthropic/claude→openai/gpt-5 succeeded pos=2",
		"10.1 turn-3 probe_cooldown_candidate anthropic/claude 1/3 billing 0 next=/ step=→  pos=0",
	}
	if !reflect.DeepEqual(gotDecs, wantDecs) {
		t.Fatalf("fallback_decisions\n got %q\nwant %q", gotDecs, wantDecs)
	}
	if d := decs[1]; len(d.PreviousAttempts) != 1 || d.PreviousAttempts[0].Reason != "model_not_found" || d.FallbackStepFromDetail != "model gpt-5 not found" {
		t.Fatalf("candidate_succeeded previousAttempts %+v detail %q", d.PreviousAttempts, d.FallbackStepFromDetail)
	}
	if at := decs[0].Time.String(); at != "2026-01-06T10:41:02.464Z" {
		t.Fatalf("decision time %s", at)
	}

	// Filters.
	byTurn, err := db.Decisions(ctx, projections.DecisionFilter{Turn: "turn-3"})
	testutil.NoError(t, err)
	byReason, err := db.Decisions(ctx, projections.DecisionFilter{Reason: "model_not_found"})
	testutil.NoError(t, err)
	since, err := db.Decisions(ctx, projections.DecisionFilter{Since: time.UnixMilli(t0 + 63_000)})
	testutil.NoError(t, err)
	if len(byTurn) != 1 || len(byReason) != 1 || len(since) != 2 {
		t.Fatalf("filters: turn %d, reason %d, since %d", len(byTurn), len(byReason), len(since))
	}
}
