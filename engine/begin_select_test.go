package engine

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

var (
	opus = events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}
	gpt5 = events.ModelRef{Provider: "openai", Model: "gpt-5"}
)

// manualEngine is a store and an engine on it with a manual clock at
// testutil.T0.
func manualEngine(t *testing.T) (events.Store, *Engine, context.Context) {
	st := testutil.Store(t)
	return st, newEngine(t, st, testutil.NewManualClock(testutil.T0)), testutil.Context(t)
}

// appended runs f and returns the types of the events it appended, in
// stream order, with the last sequence before and after.
func appended(t *testing.T, st events.Store, f func()) (types []string, before, after uint64) {
	t.Helper()
	ctx := testutil.Context(t)
	before, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	f()
	after, err = st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	if after == before {
		return nil, before, after
	}
	for ev, err := range st.Read(ctx, before+1) {
		testutil.NoError(t, err)
		types = append(types, ev.Type)
	}
	return types, before, after
}

// A begin with a model records the selection once, for a new turn id
// only: every later begin of that id appends nothing — answered with the
// turn's current step when it repeats the request, ErrBeginMismatch naming
// the field when it does not, ErrTurnExists for another session (whose
// selection stays as it was).
func TestBegin_ModelSelectedOnceForANewTurn(t *testing.T) {
	st, e, ctx := manualEngine(t)
	begin := TurnRequest{TurnID: "rd1", Session: "rd", Select: &ModelSelection{Model: gpt5}}
	var first *Step
	got, _, _ := appended(t, st, func() {
		var err error
		first, err = e.BeginTurn(ctx, begin)
		testutil.NoError(t, err)
	})
	if want := []string{"SessionModelSelected", "TurnStarted", "AttemptStarted"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first begin appended %v, want %v", got, want)
	}
	if first.Replayed || first.Next.Call == nil || first.Next.Call.Provider != "openai" || first.Next.Call.Model != "gpt-5" {
		t.Fatalf("first step %+v", first)
	}
	cron := &policy.CronPayload{Model: gpt5}
	override := &[]policy.ModelRef{opus}
	for _, tc := range []struct {
		name string
		req  TurnRequest
		err  string // "" = replayed
	}{
		{"identical", begin, ""},
		{"identical, chat spelled out", TurnRequest{TurnID: "rd1", Session: "rd", Chat: ChatDirect, Select: &ModelSelection{Model: gpt5, Source: "user"}}, ""},
		{"no model", TurnRequest{TurnID: "rd1", Session: "rd"}, ""},
		{"another model", TurnRequest{TurnID: "rd1", Session: "rd", Select: &ModelSelection{Model: opus}},
			`engine: turn already begun with another request: turn rd1 was begun with model "openai/gpt-5", this begin asks "anthropic/claude-opus-4-6"`},
		{"another source", TurnRequest{TurnID: "rd1", Session: "rd", Select: &ModelSelection{Model: gpt5, Source: "auto"}},
			`engine: turn already begun with another request: turn rd1 was begun with source "user", this begin asks "auto"`},
		{"a cron model", TurnRequest{TurnID: "rd1", Session: "rd", Cron: cron},
			`engine: turn already begun with another request: turn rd1 was begun with source "user", this begin asks "cron"`},
		{"a profile", TurnRequest{TurnID: "rd1", Session: "rd", Select: &ModelSelection{Model: gpt5, Profile: "openai:a"}},
			`engine: turn already begun with another request: turn rd1 was begun with profile "", this begin asks "openai:a"`},
		{"another chat", TurnRequest{TurnID: "rd1", Session: "rd", Chat: ChatGroup, Select: &ModelSelection{Model: gpt5}},
			`engine: turn already begun with another request: turn rd1 was begun with chat "direct", this begin asks "group"`},
		{"a fallbacks override", TurnRequest{TurnID: "rd1", Session: "rd", FallbacksOverride: override},
			`engine: turn already begun with another request: turn rd1 was begun with fallbacks_override absent, this begin asks given`},
		{"another seed", TurnRequest{TurnID: "rd1", Session: "rd", Seed: 7, HasSeed: true},
			`engine: turn already begun with another request: turn rd1 was begun with seed 42, this begin asks 7`},
		{"another session", TurnRequest{TurnID: "rd1", Session: "victim", Select: &ModelSelection{Model: opus}},
			`engine: bad request: turn already exists: "rd1" (session "rd")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var step *Step
			var err error
			got, before, after := appended(t, st, func() { step, err = e.BeginTurn(ctx, tc.req) })
			if got != nil {
				t.Fatalf("appended %v (last seq %d → %d)", got, before, after)
			}
			if tc.err == "" {
				testutil.NoError(t, err)
				if !step.Replayed || !reflect.DeepEqual(norm(step.Next), norm(first.Next)) {
					t.Fatalf("re-sent begin %+v, want the first step replayed %s", step, norm(first.Next))
				}
				return
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("err %v\nwant %s", err, tc.err)
			}
		})
	}
	if s := e.Session("victim"); !reflect.DeepEqual(s, policy.SessionState{}) {
		t.Fatalf("a refused begin stored on victim: %+v", s)
	}
	// The failure that follows records no live switch: nothing marked it.
	got, _, _ = appended(t, st, func() {
		step, err := e.ReportOutcome(ctx, "rd1", AttemptReport{Attempt: 1, Err: rateLimit()})
		testutil.NoError(t, err)
		if step.Next.Kind == policy.NextSwitch || (step.Next.Call != nil && step.Next.Call.Kind == policy.AttemptKind("live_switch")) {
			t.Fatalf("failure after re-sent begins took a live switch: %+v", step.Next)
		}
	})
	for _, ty := range got {
		if ty == "LiveSwitchMarked" {
			t.Fatalf("failure appended %v", got)
		}
	}
}

// RunTurn takes the same selection: recorded before the turn starts, and
// nothing at all for a turn id that exists.
func TestRunTurn_SelectOnlyForANewTurn(t *testing.T) {
	st, e, ctx := manualEngine(t)
	req := TurnRequest{TurnID: "r1", Session: "s1", Select: &ModelSelection{Model: gpt5}}
	var res *TurnResult
	got, _, _ := appended(t, st, func() {
		var err error
		res, err = e.RunTurn(ctx, req, script{})
		testutil.NoError(t, err)
	})
	if want := []string{"SessionModelSelected", "TurnStarted", "AttemptStarted", "AttemptSucceeded", "ProfileUsed", "SessionAuthPinned", "TurnSucceeded"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("run appended %v, want %v", got, want)
	}
	if res.AnsweredBy != gpt5 {
		t.Fatalf("answered by %s", res.AnsweredBy)
	}
	got, _, _ = appended(t, st, func() {
		_, err := e.RunTurn(ctx, TurnRequest{TurnID: "r1", Session: "s1", Select: &ModelSelection{Model: opus}}, script{})
		if !errors.Is(err, ErrTurnExists) {
			t.Fatalf("run of an existing id: %v", err)
		}
	})
	if got != nil {
		t.Fatalf("run of an existing id appended %v", got)
	}
	if s := e.Session("s1"); s.Model != gpt5 {
		t.Fatalf("session model %s", s.Model)
	}
	for _, bad := range []TurnRequest{
		{Session: "s1", Select: &ModelSelection{Model: gpt5, Source: "cron"}},
		{Session: "s1", Select: &ModelSelection{Model: gpt5}, Cron: &policy.CronPayload{Model: gpt5}},
		{Session: "s1", Select: &ModelSelection{Model: events.ModelRef{Provider: "openai"}}},
	} {
		got, _, _ := appended(t, st, func() {
			if _, err := e.BeginTurn(ctx, bad); !errors.Is(err, ErrBadRequest) {
				t.Fatalf("begin %+v: %v", bad.Select, err)
			}
		})
		if got != nil {
			t.Fatalf("a bad begin appended %v", got)
		}
	}
}

// `/model` of exactly the session's current selection changes nothing:
// nothing is appended, and the running turn is not marked.
func TestSelectModel_CurrentSelectionAppendsNothing(t *testing.T) {
	st, e, ctx := manualEngine(t)
	origin := &opus
	other := &events.ModelRef{Provider: "openai", Model: "gpt-4o"}
	for _, tc := range []struct {
		name    string
		session string
		first   func() error // the selection in force ("" = none)
		model   events.ModelRef
		source  string
		origin  *events.ModelRef
		profile string
		want    []string
	}{
		{"same model, user", "a", nil, gpt5, "user", nil, "", nil},
		{"same model, source defaulted", "a", nil, gpt5, "", nil, "", nil},
		{"same model, other source", "a", nil, gpt5, "legacy", nil, "", []string{"SessionModelSelected"}},
		{"other model", "a", nil, opus, "legacy", nil, "", []string{"SessionModelSelected"}},
		{"same model, new pin", "b", nil, gpt5, "user", nil, "openai:a", []string{"SessionModelSelected", "SessionAuthPinned"}},
		{"same model, same pin", "b", nil, gpt5, "user", nil, "openai:a", nil},
		{"same auto override and origin", "c", func() error {
			_, err := e.SelectModel(ctx, "c", gpt5, "auto", origin, "")
			return err
		}, gpt5, "auto", origin, "", nil},
		{"same auto override, other origin", "c", nil, gpt5, "auto", other, "", []string{"SessionModelSelected"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.first != nil:
				testutil.NoError(t, tc.first())
			case e.Session(tc.session).Model == (events.ModelRef{}):
				_, err := e.SelectModel(ctx, tc.session, gpt5, "user", nil, "")
				testutil.NoError(t, err)
			}
			var evs []events.Event
			got, _, _ := appended(t, st, func() {
				var err error
				evs, err = e.SelectModel(ctx, tc.session, tc.model, tc.source, tc.origin, tc.profile)
				testutil.NoError(t, err)
			})
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(types(evs), tc.want) {
				t.Fatalf("appended %v, returned %v, want %v", got, types(evs), tc.want)
			}
		})
	}
	// A running turn of the session: the same selection marks nothing, and
	// its failure then rotates as usual (no live_switch record).
	_, err := e.SelectModel(ctx, "run", opus, "user", nil, "")
	testutil.NoError(t, err)
	_, err = e.BeginTurn(ctx, TurnRequest{TurnID: "t-run", Session: "run"})
	testutil.NoError(t, err)
	got, _, _ := appended(t, st, func() {
		_, err := e.SelectModel(ctx, "run", opus, "user", nil, "")
		testutil.NoError(t, err)
	})
	if got != nil {
		t.Fatalf("same selection during a turn appended %v", got)
	}
	var step *Step
	got, _, _ = appended(t, st, func() {
		step, err = e.ReportOutcome(ctx, "t-run", AttemptReport{Attempt: 1, Err: rateLimit()})
		testutil.NoError(t, err)
	})
	// A rate limit on the first attempt: the same-profile retry's wait.
	if want := []string{"AttemptFailed", "RetryScheduled"}; !reflect.DeepEqual(got, want) || step.Next.Kind != policy.NextWait || step.Next.WaitMs != 785 {
		t.Fatalf("failure appended %v, next %s; want %v and a 785 ms wait", got, norm(step.Next), want)
	}
}

// A turn whose TurnStarted holds an empty chain (forged: no engine writes
// one) has no next step: every step answer is a NoNextStepError naming
// the turn and its empty chain, never a Next of no kind.
func TestStep_EmptyChainHasNoNextStep(t *testing.T) {
	st, e, ctx := manualEngine(t)
	ev := events.New("main", "forged", testutil.T0, events.TurnStarted{TurnID: "forged", Session: "s1", Chat: "direct",
		Requested: opus, SelectionSource: "default", Chain: []events.Candidate{},
		ConfigHash: "sha256:unknown", AttemptLimit: 40, StartedAt: events.Millis(testutil.T0)})
	res, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "forged"), 0, ev)
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))
	want := &NoNextStepError{TurnID: "forged", Seq: res.Seq, Phase: "running", Chain: 0}
	for name, f := range map[string]func() (*Step, error){
		"current": func() (*Step, error) { return e.CurrentStep(ctx, "forged") },
		"resume":  func() (*Step, error) { return e.ResumeTurn(ctx, "forged") },
		"begin":   func() (*Step, error) { return e.BeginTurn(ctx, TurnRequest{TurnID: "forged", Session: "s1"}) },
	} {
		step, err := f()
		var nn *NoNextStepError
		if !errors.As(err, &nn) || *nn != *want {
			t.Fatalf("%s: step %+v, err %v; want %+v", name, step, err, want)
		}
	}
	if got := want.Error(); got != `engine: turn forged has no next step: its TurnStarted holds an empty candidate chain ("chain": []; no engine writes one), so there is no model to call (last commit seq 2, phase running)` {
		t.Fatalf("message %s", got)
	}
}

// A begin that stopped after its selection was stored (a crash before the
// TurnStarted): the retried begin finds no turn, its selection changes
// nothing, and only the start is appended.
func TestBegin_RetryAfterCrashBetweenSelectionAndStart(t *testing.T) {
	st, e, ctx := manualEngine(t)
	// What the crashed begin stored: its selection commit alone.
	_, err := e.SelectModel(ctx, "s1", gpt5, "user", nil, "openai:a")
	testutil.NoError(t, err)
	got, _, _ := appended(t, st, func() {
		step, err := e.BeginTurn(ctx, TurnRequest{TurnID: "c1", Session: "s1", Select: &ModelSelection{Model: gpt5, Profile: "openai:a"}})
		testutil.NoError(t, err)
		if step.Replayed || step.Next.Call == nil || step.Next.Call.ProfileID != "openai:a" {
			t.Fatalf("retried begin %+v", step)
		}
	})
	if want := []string{"TurnStarted", "AttemptStarted"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("retried begin appended %v, want %v", got, want)
	}
}

// A begin's fallbacks (the caller's override, a cron payload's) are
// compared with the recorded chain after the requested model.
func TestBegin_ResentFallbacksComparedWithTheChain(t *testing.T) {
	st, e, ctx := manualEngine(t)
	gpt4o := policy.ModelRef{Provider: "openai", Model: "gpt-4o"}
	over := TurnRequest{TurnID: "f1", Session: "s1", FallbacksOverride: &[]policy.ModelRef{gpt5, opus}}
	cron := TurnRequest{TurnID: "f2", Session: "s2", Cron: &policy.CronPayload{Model: gpt5, Fallbacks: []policy.ModelRef{opus}, HasFallbacks: true}}
	for _, r := range []TurnRequest{over, cron} {
		_, err := e.BeginTurn(ctx, r)
		testutil.NoError(t, err)
	}
	for _, tc := range []struct {
		name string
		req  TurnRequest
		err  string
	}{
		// The requested opus listed again is dropped from the chain, as
		// when it started.
		{"same override", over, ""},
		{"override in another order", TurnRequest{TurnID: "f1", Session: "s1", FallbacksOverride: &[]policy.ModelRef{opus, gpt5}}, ""},
		{"another override", TurnRequest{TurnID: "f1", Session: "s1", FallbacksOverride: &[]policy.ModelRef{gpt4o}},
			`engine: turn already begun with another request: turn f1 was begun with fallbacks_override ["openai/gpt-5"], this begin asks ["openai/gpt-4o"]`},
		{"a strict override", TurnRequest{TurnID: "f1", Session: "s1", FallbacksOverride: &[]policy.ModelRef{}},
			`engine: turn already begun with another request: turn f1 was begun with fallbacks_override ["openai/gpt-5"], this begin asks []`},
		{"same cron", cron, ""},
		{"cron, other fallbacks", TurnRequest{TurnID: "f2", Session: "s2", Cron: &policy.CronPayload{Model: gpt5, HasFallbacks: true}},
			`engine: turn already begun with another request: turn f2 was begun with fallbacks ["anthropic/claude-opus-4-6"], this begin asks []`},
		{"cron, other model", TurnRequest{TurnID: "f2", Session: "s2", Cron: &policy.CronPayload{Model: gpt4o}},
			`engine: turn already begun with another request: turn f2 was begun with model "openai/gpt-5", this begin asks "openai/gpt-4o"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			got, _, _ := appended(t, st, func() { _, err = e.BeginTurn(ctx, tc.req) })
			if got != nil {
				t.Fatalf("appended %v", got)
			}
			if (tc.err == "" && err != nil) || (tc.err != "" && (err == nil || err.Error() != tc.err)) {
				t.Fatalf("err %v\nwant %s", err, tc.err)
			}
		})
	}
}
