package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// replay --verify re-decides the provider-reset behaviour (issue 17): the
// codex-usage-limit run verifies as recorded, and a block whose deadline
// is not the provider's reset is named, field blocked_until.
func TestVerify_SubscriptionBlockIsReDecided(t *testing.T) {
	st := openStore(t)
	runScenario(t, st, "codex-usage-limit", "demo")
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() || rep.Checked[replay.DecisionOutcome] != 3 {
		t.Fatalf("clean run:\n%s", dumpReport(t, rep))
	}

	_, last := foldStore(t, st, "demo")
	at := last.Add(2 * time.Hour)
	startTurn(t, st, "demo", "tampered", at)
	failed := at.Add(300 * time.Millisecond)
	reset := events.Millis(failed) + 86400000
	ps := decideFailure(t, st, "demo", "tampered", failed, policy.Outcome{Reason: policy.ReasonRateLimit, Status: 429,
		Disposition: policy.DispositionFailover, RetryAfterMs: 86400000,
		Reset:      &events.ProviderReset{At: reset, Source: "codex_rate_limits", Field: "message", Match: "resets_in_seconds=86400"},
		LongWindow: &events.UsageWindow{Kind: "subscription", Field: "code", Match: "usage_limit_reached"},
		Error:      events.ProviderErrorRecord{Status: 429, Code: "usage_limit_reached"}, Evidence: events.Evidence{Rule: "status.429"}, LatencyMs: 300})
	found := false
	for i, p := range ps {
		if pf, ok := p.(events.ProfileFailureRecorded); ok {
			if pf.BlockedUntil != reset {
				t.Fatalf("decided block %d, want the reset %d", pf.BlockedUntil, reset)
			}
			pf.BlockedUntil -= time.Hour.Milliseconds()
			ps[i], found = pf, true
		}
	}
	if !found {
		t.Fatalf("no ProfileFailureRecorded: %v", ps)
	}
	seq := appendDecision(t, st, "demo", "tampered", failed, ps)
	rep, err = replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	requireDivergence(t, rep, seq, "ProfileFailureRecorded", "blocked_until")
}
