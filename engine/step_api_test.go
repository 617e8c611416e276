package engine

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// stepDrive plays one turn through the step API, answering each call from
// s, sleeping each wait on clock and re-sending every outcome and resume
// once to check that the repeat returns the same next and appends nothing.
func stepDrive(t *testing.T, e *Engine, st events.Store, clock *testutil.ManualClock, req TurnRequest, s script) policy.Next {
	t.Helper()
	ctx := testutil.Context(t)
	step, err := e.BeginTurn(ctx, req)
	testutil.NoError(t, err)
	for range 100 {
		n := step.Next
		switch n.Kind {
		case policy.NextCall:
			rep := AttemptReport{Attempt: n.Call.Attempt, OK: true}
			if err := s[n.Call.Provider+"/"+n.Call.Model]; err != nil {
				rep = AttemptReport{Attempt: n.Call.Attempt, Err: err}
			}
			step, err = e.ReportOutcome(ctx, req.TurnID, rep)
			testutil.NoError(t, err)
			assertRepeat(t, st, step, func() (*Step, error) { return e.ReportOutcome(ctx, req.TurnID, rep) })
		case policy.NextWait:
			if _, err := e.ResumeTurn(ctx, req.TurnID); !errors.Is(err, policy.ErrWaitNotOver) {
				t.Fatalf("resume before the wait is over: %v", err)
			}
			clock.Advance(time.Duration(n.WaitMs) * time.Millisecond)
			step, err = e.ResumeTurn(ctx, req.TurnID)
			testutil.NoError(t, err)
			assertRepeat(t, st, step, func() (*Step, error) { return e.ResumeTurn(ctx, req.TurnID) })
		default:
			return n
		}
	}
	t.Fatal("turn did not end")
	return policy.Next{}
}

func assertRepeat(t *testing.T, st events.Store, first *Step, again func() (*Step, error)) {
	t.Helper()
	before, err := st.LastSeq(testutil.Context(t), "")
	testutil.NoError(t, err)
	rep, err := again()
	testutil.NoError(t, err)
	after, err := st.LastSeq(testutil.Context(t), "")
	testutil.NoError(t, err)
	if after != before {
		t.Fatalf("a repeated step appended: last seq %d → %d", before, after)
	}
	if !rep.Replayed {
		t.Fatalf("repeat not marked Replayed")
	}
	want, got := first.Next, rep.Next
	if want.Kind == policy.NextWait { // WaitMs counts from now; ResumeAt is the contract
		want.WaitMs, got.WaitMs = 0, 0
	}
	if !reflect.DeepEqual(norm(want), norm(got)) {
		t.Fatalf("repeat next\n got %s\nwant %s", norm(got), norm(want))
	}
}

func norm(n policy.Next) string { b, _ := json.Marshal(n); return string(b) }

func turnPayloads(t *testing.T, st events.Store, turnID string) []string {
	t.Helper()
	var out []string
	for ev, err := range st.Read(testutil.Context(t), 1) {
		testutil.NoError(t, err)
		if ev.CorrelationID == turnID {
			b, _ := json.Marshal(ev.Data)
			out = append(out, ev.Type+" "+string(b))
		}
	}
	return out
}

// The step API decides exactly what RunTurn decides: the same events with
// the same payloads (retry waits, cooldown, rotation, fallback, notice),
// and the same end.
func TestStep_SameEventsAsRunTurn(t *testing.T) {
	s := script{"anthropic/claude-opus-4-6": rateLimit()}
	stA, stB := testutil.Store(t), testutil.Store(t)
	clockA, clockB := testutil.NewManualClock(testutil.T0), testutil.NewManualClock(testutil.T0)
	eA, eB := newEngine(t, stA, clockA), newEngine(t, stB, clockB)
	res, err := eA.RunTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "s1"}, CallerFunc(func(ctx context.Context, r CallRequest) (Answer, error) {
		return s.Call(ctx, r)
	}))
	testutil.NoError(t, err)
	end := stepDrive(t, eB, stB, clockB, TurnRequest{TurnID: "t1", Session: "s1"}, s)
	if end.Kind != policy.NextDone || end.AnsweredBy != res.AnsweredBy || len(end.Notices) != 1 {
		t.Fatalf("end %+v, RunTurn %+v", end, res)
	}
	a, b := turnPayloads(t, stA, "t1"), turnPayloads(t, stB, "t1")
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("events differ\nRunTurn:\n%v\nstep API:\n%v", a, b)
	}
	if !reflect.DeepEqual(eA.Profile("anthropic:a"), eB.Profile("anthropic:a")) {
		t.Fatalf("profiles differ: %+v vs %+v", eA.Profile("anthropic:a"), eB.Profile("anthropic:a"))
	}
}

// A turn begun on one engine is continued on another engine of another
// connection to the same server: the state lives in the stream.
func TestStep_ContinueOnAnotherEngine(t *testing.T) {
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	e1 := newEngine(t, st, clock)
	e2, err := New(testutil.Context(t), st, "main", WithClock(clock))
	testutil.NoError(t, err)
	t.Cleanup(e2.Close)
	step, err := e1.BeginTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "s1"})
	testutil.NoError(t, err)
	step, err = e2.ReportOutcome(testutil.Context(t), "t1", AttemptReport{Attempt: step.Next.Call.Attempt, OK: true})
	testutil.NoError(t, err)
	if step.Next.Kind != policy.NextDone {
		t.Fatalf("next %+v", step.Next)
	}
	// A re-sent begin for the same turn and session replays its end.
	again, err := e1.BeginTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "s1"})
	testutil.NoError(t, err)
	if !again.Replayed || again.Next.Kind != policy.NextDone {
		t.Fatalf("re-sent begin %+v", again)
	}
	if _, err := e1.BeginTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "other"}); !errors.Is(err, ErrTurnExists) {
		t.Fatalf("begin on another session: %v", err)
	}
}

func TestStep_BadReportsChangeNothing(t *testing.T) {
	st := testutil.Store(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	step, err := e.BeginTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"})
	testutil.NoError(t, err)
	last, _ := st.LastSeq(ctx, "")
	var ae *AttemptError
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 2, OK: true}); !errors.As(err, &ae) || !errors.Is(err, ErrAttemptNotPlanned) {
		t.Fatalf("unplanned attempt: %v", err)
	}
	if _, err := e.ReportOutcome(ctx, "nope", AttemptReport{Attempt: 1, OK: true}); !errors.Is(err, ErrUnknownTurn) {
		t.Fatalf("unknown turn: %v", err)
	}
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("neither ok nor error: %v", err)
	}
	// A latency is stored as a JSON number: above 2^53 − 1 JavaScript would round it.
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, OK: true, LatencyMs: 1 << 53}); !errors.Is(err, ErrBadRequest) ||
		err.Error() != "engine: bad request: latency_ms 9007199254740992 is not from 0 to 9007199254740991" {
		t.Fatalf("latency 2^53: %v", err)
	}
	if _, err := e.ResumeTurn(ctx, "nope"); !errors.Is(err, ErrUnknownTurn) {
		t.Fatalf("resume unknown: %v", err)
	}
	if now, _ := st.LastSeq(ctx, ""); now != last {
		t.Fatalf("bad reports appended: %d → %d", last, now)
	}
	// Attempt 1 fails (auth: rotation), then the same attempt reported ok
	// is a mismatch, not a new outcome.
	_, err = e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: step.Next.Call.Attempt, Err: authError()})
	testutil.NoError(t, err)
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, OK: true}); !errors.Is(err, ErrOutcomeMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	// The same failure sent again is replayed; another provider error for
	// the same attempt (a 429 where a 401 was recorded) is a mismatch too:
	// its sender must not take it as recorded.
	if again, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, Err: authError()}); err != nil || !again.Replayed {
		t.Fatalf("the same failure again: %+v %v", again, err)
	}
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, Err: rateLimit()}); !errors.Is(err, ErrOutcomeMismatch) {
		t.Fatalf("another failure: %v", err)
	}
	// So is the same error once output had started: the decision reads
	// it (no same-call retry), so its sender must not be told "replayed".
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, Err: &ReplayUnsafeError{Err: authError(), OutputStarted: true}}); !errors.Is(err, ErrOutcomeMismatch) {
		t.Fatalf("the same error after output started: %v", err)
	}
	// A resume while a call is in flight replays the call.
	cur, err := e.ResumeTurn(ctx, "t1")
	testutil.NoError(t, err)
	if !cur.Replayed || cur.Next.Kind != policy.NextCall || cur.Next.Call.Attempt != 2 {
		t.Fatalf("resume in flight %+v", cur.Next)
	}
}
