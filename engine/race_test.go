package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// raceConfig: three anthropic profiles shared by every turn, openai fallback.
const raceConfig = `
auth:
  profiles:
    "anthropic:a": {provider: anthropic, type: api_key}
    "anthropic:b": {provider: anthropic, type: api_key}
    "anthropic:c": {provider: anthropic, type: api_key}
    "openai:a": {provider: openai, type: api_key}
  order:
    anthropic: ["anthropic:a", "anthropic:b", "anthropic:c"]
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [openai/gpt-5]
`

// raceClock moves with the wall clock from testutil.T0 and can be moved
// forward (a turn's wait is skipped by moving it to the resume time); its
// Sleep moves it instead of sleeping. Time never goes back.
type raceClock struct {
	mu     sync.Mutex
	start  time.Time
	offset time.Duration
}

func (c *raceClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return testutil.T0.Add(time.Since(c.start) + c.offset)
}

func (c *raceClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	return ctx.Err()
}

// advanceTo moves the clock to at least ms (Unix ms).
func (c *raceClock) advanceTo(ms int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := time.UnixMilli(ms).Sub(testutil.T0.Add(time.Since(c.start) + c.offset)); d > 0 {
		c.offset += d
	}
}

// raceFirstAppend runs during once, inside e's first append to a subject
// holding part — between that decision and its append, where the races
// the tests stage happen — and counts e's appends to such subjects. stop
// removes the hook and returns the count.
func raceFirstAppend(e *engine.Engine, part string, during func()) (stop func() (appends int)) {
	var once sync.Once
	n := 0
	engine.SetBeforeAppend(e, func(subject string) {
		if strings.Contains(subject, part) {
			n++
			once.Do(during)
		}
	})
	return func() int {
		engine.SetBeforeAppend(e, nil)
		return n
	}
}

// raceEngine is an engine of agent main on st with clock and opts,
// closed when t ends, which applies raceConfig when apply is set.
func raceEngine(t *testing.T, st events.Store, clock engine.Clock, apply bool, opts ...engine.Option) *engine.Engine {
	t.Helper()
	ctx := testutil.Context(t)
	e, err := engine.New(ctx, st, "main", append([]engine.Option{engine.WithClock(clock)}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	if apply {
		l, err := config.Parse([]byte(raceConfig), "race")
		testutil.NoError(t, err)
		_, _, err = e.ApplyConfig(ctx, "race", l)
		testutil.NoError(t, err)
	}
	return e
}

// twoInstances starts one embedded server on loopback and two stores (two
// connections, as two gateway processes) with an engine each.
func twoInstances(t *testing.T) (events.Store, *engine.Engine, *engine.Engine, *raceClock) {
	t.Helper()
	ctx := testutil.Context(t)
	st1, st2 := testutil.OpenPair(t, events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	clock := &raceClock{start: time.Now()}
	var engs [2]*engine.Engine
	for i, st := range []events.Store{st1, st2} {
		engs[i] = raceEngine(t, st, clock, i == 0, engine.WithConflictRetries(64), engine.WithSeeds(func(string) uint64 { return 7 }))
	}
	if err := engs[1].Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return st1, engs[0], engs[1], clock
}

func overloaded() error {
	return &classify.ProviderError{Status: 529, Code: "overloaded_error",
		Message: `Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}
}

func limited() error {
	return &classify.ProviderError{Status: 429, Code: "rate_limit_error",
		Message: `Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`}
}

// barrier holds the first n callers until all n arrived (or a second
// passed), then lets everyone through: both writers have decided before
// either appends, so the race always happens.
func barrier(n int32) func(string) {
	var arrived atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	return func(string) {
		if arrived.Add(1) > n {
			return
		}
		if arrived.Load() == n {
			once.Do(func() { close(release) })
		}
		select {
		case <-release:
		case <-time.After(time.Second):
		}
	}
}

// racedTurn begins turn t1 on session s1 on the first of two instances
// and makes the next decision of each instance wait until both have
// decided, so their appends race.
func racedTurn(t *testing.T) (events.Store, *engine.Engine, *engine.Engine, context.Context) {
	t.Helper()
	st, a, b, _ := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if _, err := a.BeginTurn(ctx, engine.TurnRequest{TurnID: "t1", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	hook := barrier(2)
	engine.SetBeforeAppend(a, hook)
	engine.SetBeforeAppend(b, hook)
	return st, a, b, ctx
}

// Two reports of one attempt racing on two instances: exactly one is
// recorded; an identical one gets the recorded answer (Replayed), a
// contradicting one ErrOutcomeMismatch, and the stream holds one outcome.
func TestRace_TwoReportsOfOneAttempt(t *testing.T) {
	cases := []struct {
		name     string
		a, b     engine.AttemptReport
		mismatch bool
	}{
		{"success and success", engine.AttemptReport{Attempt: 1, OK: true}, engine.AttemptReport{Attempt: 1, OK: true}, false},
		{"success and overload", engine.AttemptReport{Attempt: 1, OK: true}, engine.AttemptReport{Attempt: 1, Err: overloaded()}, true},
		{"rate limit and rate limit", engine.AttemptReport{Attempt: 1, Err: limited()}, engine.AttemptReport{Attempt: 1, Err: limited()}, false},
		{"rate limit and success", engine.AttemptReport{Attempt: 1, Err: limited()}, engine.AttemptReport{Attempt: 1, OK: true}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, a, b, ctx := racedTurn(t)
			var wg sync.WaitGroup
			steps, errs := make([]*engine.Step, 2), make([]error, 2)
			for i, x := range []struct {
				e *engine.Engine
				r engine.AttemptReport
			}{{a, tc.a}, {b, tc.b}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					steps[i], errs[i] = x.e.ReportOutcome(ctx, "t1", x.r)
				}()
			}
			wg.Wait()
			var ok, replayed, mismatched int
			for i := range errs {
				switch {
				case errs[i] == nil && steps[i].Replayed:
					replayed++
				case errs[i] == nil:
					ok++
				case errors.Is(errs[i], engine.ErrOutcomeMismatch):
					mismatched++
				default:
					t.Fatalf("report %d: %v", i, errs[i])
				}
			}
			if tc.mismatch && (ok != 1 || mismatched != 1) || !tc.mismatch && (ok != 1 || replayed != 1) {
				t.Fatalf("recorded %d, replayed %d, mismatched %d", ok, replayed, mismatched)
			}
			if n := outcomesOf(t, st, "t1", 1); n != 1 {
				t.Fatalf("%d outcomes recorded for attempt 1, want 1", n)
			}
			verifyOK(t, st)
		})
	}
}

// outcomesOf counts the recorded outcomes of one attempt of a turn.
func outcomesOf(t *testing.T, st events.Store, turn string, attempt int) int {
	t.Helper()
	n := 0
	for ev, err := range st.Read(context.Background(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		switch p := ev.Data.(type) {
		case events.AttemptFailed:
			if p.TurnID == turn && p.Attempt == attempt {
				n++
			}
		case events.AttemptSucceeded:
			if p.TurnID == turn && p.Attempt == attempt {
				n++
			}
		}
	}
	return n
}

func verifyOK(t *testing.T, st events.Store) {
	t.Helper()
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify: %d divergent commits of %d; first: %+v", rep.Diverged, rep.Commits, rep.Divergences[0])
	}
}

// Two instances, eight clients each, every turn on the same three
// profiles, 20% of first calls failing, and every report sent twice at once —
// to both instances, identical or contradicting: no attempt has two
// outcomes, no turn goes on after its end, every failure is counted on
// the count before it, nothing but the documented answers comes back, and
// replay --verify passes on the ledger.
func TestRace_TwoInstancesRacingReports(t *testing.T) {
	st, a, b, clock := twoInstances(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const clients, turns = 16, 12
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 99))
			own, other := a, b
			if c%2 == 1 {
				own, other = b, a
			}
			for k := range turns {
				if err := raceTurn(ctx, clock, own, other, fmt.Sprintf("c%d-t%d", c, k), fmt.Sprintf("s%d", c), rng); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	checkLedger(t, st)
	verifyOK(t, st)

	// The same ledger with one forged commit, recorded with a basis like
	// the engine's: a second outcome for a turn that has ended. Verify
	// fails and names it.
	subj := events.MustSubject("main", events.AggTurn, "c0-t0")
	last, err := st.LastSeq(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	forged := events.New("main", "c0-t0", testutil.T0, events.AttemptSucceeded{TurnID: "c0-t0", Attempt: 1}, events.WithCorrelation("c0-t0"))
	res, err := st.AppendCommit(ctx, events.AppendRequest{Subject: subj, Expected: events.AnySeq, Basis: last, Events: []events.Event{forged}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Verify(ctx, st, replay.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 1 || len(rep.Divergences) != 1 || rep.Divergences[0].Seq != res.Seq || rep.Divergences[0].Turn != "c0-t0" {
		t.Fatalf("forged commit at seq %d: verify reported %d divergences %+v", res.Seq, rep.Diverged, rep.Divergences)
	}

	// A stored commit sent again byte for byte, without its message id
	// (so the stream keeps both): its recorded basis lies before the
	// turn's later decisions, so verify names the copy, not the original.
	js, err := jetstream.New(natstest.DialWriter(t, st))
	if err != nil {
		t.Fatal(err)
	}
	str, err := js.Stream(ctx, events.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	var orig *jetstream.RawStreamMsg
	for seq := uint64(1); orig == nil; seq++ {
		m, err := str.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if d := string(m.Data); strings.Contains(d, `"AttemptSucceeded"`) && strings.Contains(d, `"basis"`) && !strings.Contains(d, `"c0-t0"`) {
			orig = m
		}
	}
	ack, err := js.Publish(ctx, orig.Subject, orig.Data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = replay.Verify(ctx, st, replay.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Diverged != 2 || rep.Divergences[1].Seq != ack.Sequence || !strings.Contains(rep.Divergences[1].Message, "sent again") {
		t.Fatalf("copy of seq %d at seq %d: verify reported %d divergences %+v", orig.Sequence, ack.Sequence, rep.Diverged, rep.Divergences)
	}
}

// raceTurn drives one turn, sending each outcome to both instances at
// once: 20% of the time the second report contradicts the first.
func raceTurn(ctx context.Context, clock *raceClock, own, other *engine.Engine, turn, session string, rng *rand.Rand) error {
	step, err := own.BeginTurn(ctx, engine.TurnRequest{TurnID: turn, Session: session})
	if err != nil {
		return fmt.Errorf("begin %s: %w", turn, err)
	}
	for range 50 {
		switch step.Next.Kind {
		case policy.NextCall:
		case policy.NextWait:
			clock.advanceTo(step.Next.ResumeAt)
			if step, err = own.ResumeTurn(ctx, turn); err != nil {
				return fmt.Errorf("resume %s: %w", turn, err)
			}
			continue
		default:
			return nil
		}
		att := step.Next.Call.Attempt
		mine := engine.AttemptReport{Attempt: att, OK: true}
		// 20% of first calls fail; a retry or rotation fails three times
		// in four, so same-profile retries run out and failures are
		// counted (at one in two, about five failures were recorded per
		// run, and the guard below failed now and then under load).
		if rng.IntN(5) == 0 || att > 1 && rng.IntN(4) != 0 {
			mine = engine.AttemptReport{Attempt: att, Err: limited()}
		}
		theirs := mine
		if rng.IntN(5) == 0 {
			if mine.OK {
				theirs = engine.AttemptReport{Attempt: att, Err: overloaded()}
			} else {
				theirs = engine.AttemptReport{Attempt: att, OK: true}
			}
		}
		var wg sync.WaitGroup
		var s1, s2 *engine.Step
		var e1, e2 error
		wg.Add(2)
		go func() { defer wg.Done(); s1, e1 = own.ReportOutcome(ctx, turn, mine) }()
		go func() { defer wg.Done(); s2, e2 = other.ReportOutcome(ctx, turn, theirs) }()
		wg.Wait()
		for _, e := range []error{e1, e2} {
			if e != nil && !errors.Is(e, engine.ErrOutcomeMismatch) {
				return fmt.Errorf("report %s attempt %d: %w", turn, att, e)
			}
		}
		switch {
		case e1 == nil && e2 == nil:
			if !s1.Replayed && !s2.Replayed {
				return fmt.Errorf("%s attempt %d: both reports recorded", turn, att)
			}
		case e1 != nil && e2 != nil:
			return fmt.Errorf("%s attempt %d: both reports refused: %v / %v", turn, att, e1, e2)
		}
		if e1 != nil { // the other instance's report was recorded: go on from it
			s1 = s2
		}
		step = s1
	}
	return fmt.Errorf("turn %s did not end", turn)
}

// checkLedger scans the stream: at most one outcome per attempt, nothing
// after a turn's end, and each failure counted on the profile's count as
// folded just before it.
func checkLedger(t *testing.T, st events.Store) {
	t.Helper()
	type key struct {
		turn    string
		attempt int
	}
	outcomes := map[key]int{}
	ended := map[string]bool{}
	profiles := map[string]policy.ProfileState{}
	failures := 0
	for ev, err := range st.Read(context.Background(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Aggregate == events.AggTurn && ended[ev.Key] {
			t.Fatalf("seq %d: %s after turn %s ended", ev.Seq, ev.Type, ev.Key)
		}
		switch p := ev.Data.(type) {
		case events.AttemptFailed:
			outcomes[key{p.TurnID, p.Attempt}]++
		case events.AttemptSucceeded:
			outcomes[key{p.TurnID, p.Attempt}]++
		case events.TurnSucceeded, events.TurnExhausted, events.TurnStopped:
			ended[ev.Key] = true
		case events.ProfileFailureRecorded:
			failures++
			before := profiles[p.ProfileID]
			want := before.ErrorCount + 1
			if p.CountersReset {
				want = 1
			}
			if p.ErrorCount != want {
				t.Fatalf("seq %d: %s failure recorded errorCount %d on a count of %d: a failure was lost", ev.Seq, p.ProfileID, p.ErrorCount, before.ErrorCount)
			}
		}
		if ev.Aggregate == events.AggProfile {
			profiles[ev.Key] = policy.EvolveProfile(profiles[ev.Key], ev.Data)
		}
	}
	for k, n := range outcomes {
		if n > 1 {
			t.Fatalf("turn %s attempt %d has %d outcomes", k.turn, k.attempt, n)
		}
	}
	t.Logf("%d failures recorded", failures)
	if failures < 5 {
		t.Fatalf("%d failures recorded: the test exercised too little", failures)
	}
}

// A session command racing a turn decision that writes the session (a
// /new on one instance while the turn's success pins its profile on the
// other, both decided before either appends): whichever is stored second
// was decided on a state holding the first — the turn's session events
// are never stored on top of a session command they did not see.
func TestRace_SessionCommandAndTurn(t *testing.T) {
	for _, cmd := range []string{"reset", "select"} {
		t.Run(cmd, func(t *testing.T) {
			st, a, b, ctx := racedTurn(t)
			var wg sync.WaitGroup
			var turnErr, cmdErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, turnErr = a.ReportOutcome(ctx, "t1", engine.AttemptReport{Attempt: 1, OK: true})
			}()
			go func() {
				defer wg.Done()
				if cmd == "reset" {
					_, cmdErr = b.Reset(ctx, "s1", "new")
				} else {
					_, cmdErr = b.SelectModel(ctx, "s1", events.ModelRef{Provider: "openai", Model: "gpt-5"}, string(policy.SourceUser), nil, "")
				}
			}()
			wg.Wait()
			if turnErr != nil || cmdErr != nil {
				t.Fatalf("turn: %v, command: %v", turnErr, cmdErr)
			}
			// Every commit holding session s1's events was decided on a
			// basis that holds every earlier such commit.
			var last uint64
			n := 0
			for c := range commitsOf(t, st) {
				if !touchesSession(c, "s1") {
					continue
				}
				n++
				if b := c[0].Basis; last > 0 && b < last {
					t.Fatalf("seq %d (%s) was decided on seq %d, before the session's commit at %d", c[0].Seq, c[0].Type, b, last)
				}
				last = c[0].Seq
			}
			// A user command stored first (rule revision 3) leaves the
			// turn nothing to write on the session: a turn writes no auto
			// pin once a user command followed its start (no stale pin).
			// Stored second, the command follows the turn's pin.
			commandFirst, commanded, pinnedAfter := false, false, false
			for c := range commitsOf(t, st) {
				for _, ev := range c {
					switch ev.Data.(type) {
					case events.SessionModelSelected, events.SessionReset:
						commanded = true
					case events.TurnSucceeded:
						commandFirst = commanded
					case events.SessionAuthPinned:
						pinnedAfter = pinnedAfter || commanded
					}
				}
			}
			if pinnedAfter {
				t.Fatalf("the turn pinned a profile after the %s stored before its success", cmd)
			}
			if want := map[bool]int{true: 1, false: 2}[commandFirst]; n != want {
				t.Fatalf("%d commits wrote session s1, want %d (command stored first: %v)", n, want, commandFirst)
			}
			verifyOK(t, st)
		})
	}
}

// commitsOf yields the stream's commits, each as its events.
func commitsOf(t *testing.T, st events.Store) func(func([]events.Event) bool) {
	return func(yield func([]events.Event) bool) {
		var cur []events.Event
		for ev, err := range st.Read(context.Background(), 1) {
			if err != nil {
				t.Fatal(err)
			}
			if len(cur) > 0 && cur[0].Seq != ev.Seq {
				if !yield(cur) {
					return
				}
				cur = nil
			}
			cur = append(cur, ev)
		}
		if len(cur) > 0 {
			yield(cur)
		}
	}
}

func touchesSession(c []events.Event, session string) bool {
	for _, ev := range c {
		if ev.Aggregate == events.AggSession && ev.Key == session {
			return true
		}
	}
	return false
}
