package serve_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// Two serve instances on one stream (two connections to one embedded
// server, as two gateway hosts), the same report sent to both at once:
// identical reports are answered 200 + 200, one of them replayed, with the
// same next step; contradicting ones (success against failure, or two
// different errors) 200 + 409 outcome_mismatch; the stream holds one
// outcome per attempt and verifies.
func TestHTTP_RacingReportsOnTwoInstances(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	st1, a, b := twoServers(t, engine.WithClock(clock), engine.WithSeeds(func(string) uint64 { return 42 }))
	ctx := testutil.Context(t)
	cases := []struct {
		name     string
		x, y     client.Outcome
		mismatch bool
	}{
		{"identical successes", client.Outcome{Attempt: 1, OK: true}, client.Outcome{Attempt: 1, OK: true}, false},
		{"identical failures", client.Outcome{Attempt: 1, Error: rateLimited()}, client.Outcome{Attempt: 1, Error: rateLimited()}, false},
		{"success and overload", client.Outcome{Attempt: 1, OK: true}, client.Outcome{Attempt: 1, Error: &client.ProviderError{Status: 529, Message: "Overloaded"}}, true},
		// Two different errors: the sender of the one that lost must not be
		// told it was recorded (a 401 that lost to a 429 would otherwise
		// think its profile's auth failure counted).
		{"rate limit and bad key", client.Outcome{Attempt: 1, Error: rateLimited()}, client.Outcome{Attempt: 1, Error: &client.ProviderError{Status: 401, Message: "invalid x-api-key"}}, true},
	}
	for i, tc := range cases {
		for round := range 5 {
			t.Run(fmt.Sprintf("%s/%d", tc.name, round), func(t *testing.T) {
				// Past any cooldown or disable an earlier round's winner
				// left (a 401 that won disables its profile): each round
				// begins on usable profiles whichever report won before.
				clock.Advance(48 * time.Hour)
				step, err := a.cl.Begin(ctx, client.BeginRequest{Agent: "main", Session: fmt.Sprintf("s%d-%d", i, round)})
				testutil.NoError(t, err)
				if step.Next.Action != "call" || step.Next.Attempt != 1 {
					t.Fatalf("begin: %+v", step.Next)
				}
				var wg sync.WaitGroup
				steps, errs := make([]*client.Step, 2), make([]error, 2)
				for k, p := range []struct {
					srv *server
					o   client.Outcome
				}{{a, tc.x}, {b, tc.y}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						steps[k], errs[k] = p.srv.cl.Report(ctx, step.TurnID, p.o)
					}()
				}
				wg.Wait()
				ok, replayed, mismatched := 0, 0, 0
				for k := range errs {
					var ce *client.Error
					switch {
					case errs[k] == nil && steps[k].Replayed:
						replayed++
					case errs[k] == nil:
						ok++
					case errors.As(errs[k], &ce) && ce.Status == http.StatusConflict && ce.Code == serve.CodeOutcomeMismatch:
						mismatched++
					default:
						t.Fatalf("report %d: %v", k, errs[k])
					}
				}
				if tc.mismatch && (ok != 1 || mismatched != 1) || !tc.mismatch && (ok != 1 || replayed != 1) {
					t.Fatalf("recorded %d, replayed %d, mismatched %d", ok, replayed, mismatched)
				}
				if !tc.mismatch && fmt.Sprint(steps[0].Next) != fmt.Sprint(steps[1].Next) {
					t.Fatalf("different next steps: %+v / %+v", steps[0].Next, steps[1].Next)
				}
			})
		}
	}
	outcomes := map[string]int{}
	for ev, err := range st1.Read(ctx, 1) {
		testutil.NoError(t, err)
		switch p := ev.Data.(type) {
		case events.AttemptFailed:
			outcomes[fmt.Sprint(p.TurnID, p.Attempt)]++
		case events.AttemptSucceeded:
			outcomes[fmt.Sprint(p.TurnID, p.Attempt)]++
		}
	}
	if len(outcomes) != 5*len(cases) {
		t.Fatalf("%d attempts with an outcome, want %d", len(outcomes), 5*len(cases))
	}
	for k, n := range outcomes {
		if n != 1 {
			t.Fatalf("attempt %s has %d outcomes", k, n)
		}
	}
	rep, err := replay.Verify(ctx, st1, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("verify: %+v", rep.Divergences[0])
	}
}
