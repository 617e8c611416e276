package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A session key an earlier build stored under an earlier rule (here: a
// key holding U+202E) goes on while the fold holds it; a prune would
// make the fold forget it and its next command be refused as a new key,
// so maintenance leaves it (the report's old_keys).
func TestPruneSessions_OldKeyKept(t *testing.T) {
	ctx := testutil.Context(t)
	st, e, clock := pruneLedger(t)
	const legacy = "agent:main:discord:\u202Ename"
	subj, err := events.Subject("main", events.AggSession, legacy)
	testutil.NoError(t, err)
	ev := events.New("main", legacy, clock.Now().Add(-40*24*time.Hour), events.SessionReset{Session: legacy, Kind: "new"})
	if _, err := st.AppendCommit(ctx, events.AppendRequest{Subject: subj, Guard: subj, Expected: 0, Events: []events.Event{ev}}); err != nil {
		t.Fatal(err)
	}
	testutil.NoError(t, e.Sync(ctx))
	if _, err := e.Reset(ctx, legacy, "reset"); err != nil {
		t.Fatalf("before the prune: %v", err)
	}
	clock.Advance(31 * 24 * time.Hour)
	rep, err := e.PruneSessions(ctx, engine.PruneOptions{After: 30 * 24 * time.Hour})
	testutil.NoError(t, err)
	if rep.OldKeys != 1 || strings.Contains(prunedKeys(rep), "discord") {
		t.Fatalf("pruned %s, old keys %d: want the legacy session left", prunedKeys(rep), rep.OldKeys)
	}
	if _, err := e.Reset(ctx, legacy, "reset"); err != nil {
		t.Errorf("the legacy session after maintenance: %v", err)
	}
	if _, err := e.BeginTurn(ctx, engine.TurnRequest{TurnID: "t-legacy", Session: legacy}); err != nil {
		t.Errorf("no turn on the legacy session after maintenance: %v", err)
	}
}
