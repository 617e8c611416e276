package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

type okCaller struct{}

func (okCaller) Call(context.Context, engine.CallRequest) (engine.Answer, error) {
	return engine.Answer{Text: "ok"}, nil
}

func streamLines(t *testing.T, st events.Store) string {
	t.Helper()
	var b strings.Builder
	for ev, err := range st.Read(context.Background(), 1) {
		testutil.NoError(t, err)
		b.WriteString(ev.Type + "(" + ev.Key + ") ")
	}
	return b.String()
}

// A prune decided before a short turn T0 of its session and stored after
// T0 ended (no turn open: it takes effect), while T2, begun 3 s after T0,
// is decided before the prune and sent after it: T2's start is guarded by
// the session's subject (the session's quiet is measured from session
// events, which the prune's guard orders, not from T0's turn events), so
// it conflicts and starts on the pruned session — never on the selection
// the prune removed (found by a reviewer with the quiet measured from any
// activity).
func TestBeginGuard_PruneLaggingAShortTurn(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := a.SelectModel(ctx, "s-race", raceModel, string(policy.SourceUser), nil, "openai:a"); err != nil {
		t.Fatal(err)
	}
	clock.Sleep(ctx, 31*day) //nolint:errcheck
	testutil.NoError(t, b.Sync(ctx))
	decided := make(chan struct{})
	stored := make(chan struct{})
	t2 := make(chan error, 1)
	var t0Err error
	stop := raceFirstAppend(a, ".session.", func() {
		_, t0Err = b.RunTurn(ctx, engine.TurnRequest{TurnID: "t0", Session: "s-race"}, okCaller{})
		clock.Sleep(ctx, 3*time.Second) //nolint:errcheck
		raceFirstAppend(b, ".turn.", func() { close(decided); <-stored })
		go func() {
			_, err := b.BeginTurn(ctx, engine.TurnRequest{TurnID: "t2", Session: "s-race"})
			t2 <- err
		}()
		<-decided
	})
	rep, err := a.PruneSessions(ctx, engine.PruneOptions{After: 30 * day, Workers: 1})
	stop()
	close(stored)
	testutil.NoError(t, err)
	testutil.NoError(t, t0Err)
	testutil.NoError(t, <-t2)
	testutil.NoError(t, a.Sync(ctx))
	tr, _ := a.Turn("t2")
	if len(rep.Pruned) != 1 || tr.Requested == raceModel {
		t.Fatalf("pruned %d; t2 started on %s (%s), want the prune and t2 on the pruned session's default\nstream: %s",
			len(rep.Pruned), tr.Requested, tr.SelectionSource, streamLines(t, st))
	}
	verifyOK(t, st)
}

// resendStore sends the first start of turn `turn` twice, as the store does
// when the first send's answer is lost (same message, same expectation),
// running between() in between.
type resendStore struct {
	events.Store
	once    sync.Once
	turn    string
	between func()
}

func (s *resendStore) AppendCommit(ctx context.Context, req events.AppendRequest) (events.AppendResult, error) {
	resend := false
	if strings.HasSuffix(req.Subject, ".turn."+s.turn) {
		s.once.Do(func() { resend = true })
	}
	if !resend {
		return s.Store.AppendCommit(ctx, req)
	}
	if _, err := s.Store.AppendCommit(ctx, req); err != nil { // stored, answer lost
		return events.AppendResult{}, err
	}
	s.between()
	return s.Store.AppendCommit(ctx, req) // the re-send
}

// A start of a quiet session (guarded by the session's subject) whose
// first send was stored but unanswered, re-sent after a session command
// moved the session's subject: the store finds the first send under the
// turn's subject and answers it as stored, so RunTurn goes on with its
// turn (it used to get a conflict, re-decide, find its own turn and fail
// with ErrTurnExists, leaving the turn running and uncalled).
func TestBeginGuard_ResentStartIsFound(t *testing.T) {
	ctx := testutil.Context(t)
	inner, clock := memStore(t)
	rs := &resendStore{Store: inner, turn: "t1"}
	a := raceEngine(t, rs, clock, false)
	b := raceEngine(t, inner, clock, true)
	if _, err := b.SelectModel(ctx, "s1", raceModel, string(policy.SourceUser), nil, ""); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Second)
	testutil.NoError(t, a.Sync(ctx))
	rs.between = func() {
		opus := events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
		if _, err := b.SelectModel(ctx, "s1", opus, string(policy.SourceUser), nil, ""); err != nil {
			t.Error(err)
		}
	}
	if _, err := a.RunTurn(ctx, engine.TurnRequest{TurnID: "t1", Session: "s1"}, okCaller{}); err != nil {
		t.Fatalf("RunTurn with its start re-sent: %v\nstream: %s", err, streamLines(t, inner))
	}
	if tr, _ := a.Turn("t1"); tr.Phase != policy.PhaseSucceeded {
		t.Fatalf("t1 %s, want succeeded", tr.Phase)
	}
}

// A session pruned, then used again by turns alone (the fold holds it
// again, without its subject's last sequence), quiet for 10 s between
// starts: its starts keep their turns' guards (no selection or pin for a
// prune to take) instead of each conflicting once on the subject's
// SessionPruned.
func TestBeginGuard_StartsAfterPruneDoNotConflict(t *testing.T) {
	ctx := testutil.Context(t)
	st, clock := memStore(t)
	a := raceEngine(t, st, clock, true)
	if _, err := a.SelectModel(ctx, "s1", raceModel, string(policy.SourceUser), nil, "openai:a"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	rep, err := a.PruneSessions(ctx, engine.PruneOptions{After: time.Minute})
	testutil.NoError(t, err)
	if len(rep.Pruned) != 1 {
		t.Fatalf("pruned %+v", rep.Pruned)
	}
	for i, id := range []string{"t1", "t2", "t3"} {
		clock.Advance(11 * time.Second)
		before := a.Stats().Conflicts
		if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: id, Session: "s1"}); err != nil {
			t.Fatal(err)
		}
		if c := a.Stats().Conflicts - before; c != 0 {
			t.Errorf("begin %d (%s) on the re-used session: %d conflict(s), want none", i, id, c)
		}
	}
}

// memStore is an in-memory store, closed when t ends, and a manual clock.
func memStore(t *testing.T) (events.Store, *testutil.ManualClock) {
	t.Helper()
	st, err := events.OpenMemory()
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st, testutil.NewManualClock(time.UnixMilli(1_700_000_000_000))
}
