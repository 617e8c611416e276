package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// Begins of one new turn id racing on one engine, each with another model
// (or on another session): one starts the turn, the others are refused
// (ErrBeginMismatch, ErrTurnExists) and record nothing — exactly one
// selection and one TurnStarted are stored, whatever the interleaving —
// and no lock entry is left behind.
func TestBegin_RacingBeginsOfOneIDRecordOneSelection(t *testing.T) {
	for _, otherSessions := range []bool{false, true} {
		t.Run(fmt.Sprintf("other sessions %v", otherSessions), func(t *testing.T) {
			st := testutil.Store(t)
			e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
			ctx := testutil.Context(t)
			for round := range 5 {
				before := testutil.LastSeq(t, st)
				id := fmt.Sprintf("race-%d", round)
				errs := make([]error, 6)
				var wg sync.WaitGroup
				for i := range errs {
					session := fmt.Sprintf("s%d", round)
					if otherSessions {
						session = fmt.Sprintf("s%d-%d", round, i)
					}
					wg.Go(func() {
						_, errs[i] = e.BeginTurn(ctx, TurnRequest{TurnID: id, Session: session,
							Select: &ModelSelection{Model: events.ModelRef{Provider: "openai", Model: fmt.Sprintf("gpt-5-m%d", i)}}})
					})
				}
				wg.Wait()
				started := 0
				for i, err := range errs {
					switch {
					case err == nil:
						started++
					case errors.Is(err, ErrBeginMismatch), errors.Is(err, ErrTurnExists):
					default:
						t.Fatalf("round %d begin %d: %v", round, i, err)
					}
				}
				var types []string
				for ev, err := range st.Read(context.Background(), before+1) {
					testutil.NoError(t, err)
					types = append(types, ev.Type)
				}
				sel, start := 0, 0
				for _, ty := range types {
					switch ty {
					case "SessionModelSelected":
						sel++
					case "TurnStarted":
						start++
					}
				}
				if started != 1 || sel != 1 || start != 1 {
					t.Fatalf("round %d: %d begins started, %d selections and %d starts stored (%v); want 1, 1, 1", round, started, sel, start, types)
				}
			}
			if n := e.blocks.held(); n != 0 {
				t.Fatalf("%d turn ids still held", n)
			}
		})
	}
}
