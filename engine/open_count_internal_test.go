package engine

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// scanOpen counts each session's running or waiting turns by walking
// every turn: what the fold's open counts must equal.
func scanOpen(s *state) (map[string]int, int) {
	out, n := map[string]int{}, 0
	for _, t := range s.turns {
		if t.Phase.Open() {
			out[t.Session]++
			n++
		}
	}
	return out, n
}

// The fold's per-session open-turn counts follow every phase change —
// begun, waiting after a rate limit, succeeded, evicted — and a state
// restored from a snapshot counts the same.
func TestState_OpenTurnCounts(t *testing.T) {
	ctx := context.Background()
	st := testutil.Store(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0), WithFinishedTurns(2))
	check := func(when string, s *state) {
		t.Helper()
		want, n := scanOpen(s)
		if !maps.Equal(s.open, want) || s.openTurns != n {
			t.Fatalf("%s: open %v (%d), a scan finds %v (%d)", when, s.open, s.openTurns, want, n)
		}
	}
	for i := range 6 {
		id, session := fmt.Sprintf("t%d", i), fmt.Sprintf("s%d", i%2)
		if _, err := e.BeginTurn(ctx, TurnRequest{TurnID: id, Session: session}); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			_, err := e.ReportOutcome(ctx, id, AttemptReport{Attempt: 1, OK: true})
			testutil.NoError(t, err)
		case 1:
			_, err := e.ReportOutcome(ctx, id, AttemptReport{Attempt: 1, Err: rateLimit()})
			testutil.NoError(t, err)
		}
		check(fmt.Sprintf("after turn %d", i), e.st)
	}
	if e.st.openTurns != 4 || e.st.open["s0"] != 2 || e.st.open["s1"] != 2 {
		t.Fatalf("open %v (%d), want s0 and s1 two each", e.st.open, e.st.openTurns)
	}
	e.st.mu.RLock()
	sn, _, err := e.st.capture().snapshot(events.Ledger{})
	e.st.mu.RUnlock()
	testutil.NoError(t, err)
	dec, err := DecodeSnapshot(sn)
	testutil.NoError(t, err)
	r, err := restoreState("main", 2, dec)
	testutil.NoError(t, err)
	check("restored", r)
	if !maps.Equal(r.open, e.st.open) {
		t.Fatalf("restored open %v, the engine's %v", r.open, e.st.open)
	}
}
