package serve_test

import (
	"sync"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// Two serve instances on one NATS server (two connections to an embedded
// server listening on loopback), each with its own engine: failures on
// the same profile reported through both at once end in one correct
// cooldown — errorCount 2, the first failure's 30 s window kept (seed
// 004: an active window is never extended) — seen by both.
func TestTwoInstances_ConcurrentFailuresOneCooldown(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	_, a, b := twoServers(t, engine.WithClock(clock))
	ctx := testutil.Context(t)

	for round := range 3 {
		// One turn begun on each instance; both call anthropic:a.
		sa, err := a.cl.Begin(ctx, client.BeginRequest{Session: "sa"})
		testutil.NoError(t, err)
		sb, err := b.cl.Begin(ctx, client.BeginRequest{Session: "sb"})
		testutil.NoError(t, err)
		if round == 0 && (sa.Next.Profile != "anthropic:a" || sb.Next.Profile != "anthropic:a") {
			t.Fatalf("first calls %+v %+v", sa.Next, sb.Next)
		}
		if round > 0 {
			// anthropic:a is cooling: the calls go to anthropic:b.
			if sa.Next.Profile != "anthropic:b" || sb.Next.Profile != "anthropic:b" {
				t.Fatalf("round %d calls %+v %+v", round, sa.Next, sb.Next)
			}
			break
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i, x := range []struct {
			cl   *client.Client
			step *client.Step
		}{{a.cl, sa}, {b.cl, sb}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = x.cl.Report(ctx, x.step.TurnID, client.Outcome{Attempt: x.step.Next.Attempt, Error: authFailed()})
			}()
		}
		close(start)
		wg.Wait()
		testutil.NoError(t, errs[0])
		testutil.NoError(t, errs[1])
	}
	want := events.Millis(testutil.T0) + 30000
	for name, s := range map[string]*server{"a": a, "b": b} {
		profs, err := s.cl.Profiles(ctx, "main")
		testutil.NoError(t, err)
		var p client.Profile
		for _, x := range profs {
			if x.ID == "anthropic:a" {
				p = x
			}
		}
		if p.ErrorCount != 2 || p.FailureCounts["auth"] != 2 || p.CooldownUntil != want || p.Usable {
			t.Fatalf("instance %s sees anthropic:a %+v, want errorCount 2 and cooldownUntil %d", name, p, want)
		}
	}
}

// A turn begun on one instance is continued on the other.
func TestTwoInstances_ContinueTurnElsewhere(t *testing.T) {
	st1, st2 := testutil.OpenPair(t)
	a := startServer(t, st1, serve.Config{Config: loadConfig(t)})
	b := startServer(t, st2, serve.Config{})
	ctx := testutil.Context(t)
	s, err := a.cl.Begin(ctx, client.BeginRequest{Session: "s1"})
	testutil.NoError(t, err)
	s, err = b.cl.Report(ctx, s.TurnID, client.Outcome{Attempt: s.Next.Attempt, OK: true})
	testutil.NoError(t, err)
	if s.Next.Action != "done" {
		t.Fatalf("next %+v", s.Next)
	}
}
