package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// A rate limit on both anthropic profiles rotates once, then falls back to
// openai, which answers; the user sees the fallback notice.
func TestRunTurn_RateLimitRotatesThenFallsBack(t *testing.T) {
	st := testutil.Store(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	res, err := e.RunTurn(testutil.Context(t), TurnRequest{TurnID: "t1", Session: "s1"}, script{"anthropic/claude-opus-4-6": rateLimit()})
	testutil.NoError(t, err)
	if res.Outcome != OutcomeSucceeded || res.AnsweredBy.String() != "openai/gpt-5" || res.Answer.Text != "hello from openai" {
		t.Fatalf("result %+v", res)
	}
	if len(res.Notices) != 1 || !strings.HasPrefix(res.Notices[0].Text, "↪️ Model Fallback: openai/gpt-5 (selected anthropic/claude-opus-4-6; rate limit") {
		t.Fatalf("notices %+v", res.Notices)
	}
	a := e.Profile("anthropic:a")
	if a.ErrorCount != 1 || a.CooldownUntil == 0 || a.CooldownReason != "rate_limit" {
		t.Fatalf("anthropic:a %+v", a)
	}
	if got := e.Session("s1").Notice.Active; got != "openai/gpt-5" {
		t.Fatalf("notice state active %q", got)
	}
	// The turn's log, as read back from the stream, is what RunTurn returned.
	var back []string
	for ev, err := range st.Read(testutil.Context(t), 1) {
		testutil.NoError(t, err)
		if ev.CorrelationID == "t1" {
			back = append(back, ev.Type)
		}
	}
	if strings.Join(back, ",") != strings.Join(types(res.Events), ",") {
		t.Fatalf("stream %v\nresult %v", back, types(res.Events))
	}
}

// A strict single-candidate chain that fails once returns the provider's
// own error as an ExhaustedError (RawError) carrying the attempts.
func TestRunTurn_UserSelectionStrictFailsVisibly(t *testing.T) {
	e := newEngine(t, testutil.Store(t), testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	_, err := e.SelectModel(ctx, "s1", events.ModelRef{Provider: "openai", Model: "gpt-5"}, string(policy.SourceUser), nil, "")
	testutil.NoError(t, err)
	res, err := e.RunTurn(ctx, TurnRequest{Session: "s1"}, script{"openai/gpt-5": &classify.ProviderError{Status: 401, Code: "invalid_api_key", Message: "Incorrect API key provided"}})
	var ex *ExhaustedError
	if !errors.As(err, &ex) || res.Outcome != OutcomeExhausted {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if !ex.RawError || len(ex.Attempts) != 1 || ex.Attempts[0].Reason != "auth" {
		t.Fatalf("exhausted %+v", ex)
	}
}

// A context overflow stops the chain with a StoppedError.
func TestRunTurn_ContextOverflowStops(t *testing.T) {
	e := newEngine(t, testutil.Store(t), testutil.NewManualClock(testutil.T0))
	_, err := e.RunTurn(testutil.Context(t), TurnRequest{Session: "s1"}, script{"anthropic/claude-opus-4-6": &classify.ProviderError{Status: 400,
		Message: `Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 219898 tokens > 200000 maximum"}}`}})
	var se *StoppedError
	if !errors.As(err, &se) || se.Disposition != "compaction" || se.Reason != "context_overflow" {
		t.Fatalf("err %v", err)
	}
}

// twoEngineFailure runs one turn on each engine; both fail with an auth
// error on the same single profile. Engine b decides on stale state (the
// hook holds its append until a's commit is stored), so its append
// conflicts and it re-decides on a's counts.
func twoEngineFailure(t *testing.T, a, b *Engine, clock *testutil.ManualClock) {
	t.Helper()
	ctx := testutil.Context(t)
	for _, e := range []*Engine{a, b} {
		_, err := e.SelectModel(ctx, "s-"+fmt.Sprint(e == a), events.ModelRef{Provider: "openai", Model: "gpt-5"}, string(policy.SourceUser), nil, "")
		testutil.NoError(t, err)
	}
	fail := script{"openai/gpt-5": &classify.ProviderError{Status: 401, Code: "invalid_api_key", Message: "Incorrect API key provided"}}
	profSubj := events.MustSubject("main", events.AggProfile, "openai:a")
	aDone := make(chan struct{})
	bDecided := make(chan struct{})
	var once, aOnce sync.Once
	// a's failure is not appended before b has decided: b's decision is
	// taken on state without it, whatever the machine's load (holding only
	// b's append let a loaded b decide after folding a's commit, and then
	// no conflict was seen).
	a.beforeAppend = func(subject string) {
		if subject == profSubj {
			aOnce.Do(func() {
				select {
				case <-bDecided:
				case <-time.After(10 * time.Second):
				}
			})
		}
	}
	b.beforeAppend = func(subject string) {
		if subject == profSubj {
			once.Do(func() {
				close(bDecided)
				<-aDone
			})
		}
	}
	// Both calls return at the same moment: a barrier holds each call
	// until both engines are in one.
	var inCall sync.WaitGroup
	inCall.Add(2)
	barrier := CallerFunc(func(ctx context.Context, r CallRequest) (Answer, error) {
		inCall.Done()
		inCall.Wait()
		return fail.Call(ctx, r)
	})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, e := range []*Engine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.RunTurn(ctx, TurnRequest{Session: "s-" + fmt.Sprint(e == a)}, barrier)
			if e == a {
				close(aDone)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		var ex *ExhaustedError
		if !errors.As(err, &ex) {
			t.Fatalf("turn error %v, want exhausted", err)
		}
	}
	if b.Stats().Conflicts == 0 {
		t.Fatalf("engine b saw no conflict: %+v", b.Stats())
	}
	// The policy's result for two failures at the same moment.
	cfg, _ := a.Config()
	prof, _ := cfg.Profile("openai:a")
	now := events.Millis(clock.Now())
	first, _ := cfg.RecordFailure(policy.ProfileState{}, prof, policy.Failure{Reason: "auth", Model: "gpt-5"}, now)
	want, _ := cfg.RecordFailure(policy.EvolveProfile(policy.ProfileState{}, first), prof, policy.Failure{Reason: "auth", Model: "gpt-5"}, now)
	wantState := policy.EvolveProfile(policy.EvolveProfile(policy.ProfileState{}, first), want)
	testutil.NoError(t, a.Sync(ctx))
	testutil.NoError(t, b.Sync(ctx))
	for name, e := range map[string]*Engine{"a": a, "b": b} {
		got := e.Profile("openai:a")
		if got.ErrorCount != 2 || got.CooldownUntil != wantState.CooldownUntil || got.FailureCounts["auth"] != 2 {
			t.Fatalf("engine %s: openai:a %+v, want %+v", name, got, wantState)
		}
	}
	// Exactly two failures on the stream.
	evs, _, err := a.store.ReadSubject(ctx, profSubj)
	testutil.NoError(t, err)
	n := 0
	for _, ev := range evs {
		if _, ok := ev.Data.(events.ProfileFailureRecorded); ok {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d ProfileFailureRecorded, want 2", n)
	}
}

// Two engines on one store fail the same profile at the same moment: both
// failures are counted and the cooldown is the policy's for two failures.
func TestTwoEngines_SameProfileFailuresBothCounted(t *testing.T) {
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	a := newEngine(t, st, clock)
	b := newEngine(t, st, clock)
	twoEngineFailure(t, a, b, clock)
}

// The same with two stores (two NATS connections) on one embedded server
// listening on loopback, as two gateway processes would be.
func TestTwoStores_OneServer_SameProfileFailuresBothCounted(t *testing.T) {
	st1, st2 := testutil.OpenPair(t)
	clock := testutil.NewManualClock(testutil.T0)
	a := newEngine(t, st1, clock)
	b := newEngine(t, st2, clock)
	twoEngineFailure(t, a, b, clock)
}

// A turn interrupted between two decisions (its context cancelled during
// the provider call, as a killed process would be) leaves a consistent log
// — TurnStarted and AttemptStarted, nothing half-written — is reported as
// unfinished (never succeeded) by a fresh engine, and a later turn on the
// same session proceeds.
func TestCrash_InterruptedTurnIsUnfinishedAndNextTurnProceeds(t *testing.T) {
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	e := newEngine(t, st, clock)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	kill := CallerFunc(func(context.Context, CallRequest) (Answer, error) {
		cancel()
		return Answer{Text: "lost"}, nil
	})
	res, err := e.RunTurn(ctx, TurnRequest{TurnID: "killed", Session: "s1"}, kill)
	if !errors.Is(err, context.Canceled) || res == nil || res.Outcome != OutcomeUnfinished {
		t.Fatalf("err %v, result %+v", err, res)
	}
	e.Close()

	// A new engine (a restarted process) folds the stream from the start.
	e2 := newEngine(t, st, clock)
	if got := e2.Unfinished("s1"); len(got) != 1 || got[0] != "killed" {
		t.Fatalf("unfinished %v", got)
	}
	if ts, _ := e2.Turn("killed"); ts.Phase == policy.PhaseSucceeded || !ts.InFlight {
		t.Fatalf("killed turn state %+v", ts)
	}
	evs, _, err := st.ReadSubject(testutil.Context(t), events.MustSubject("main", events.AggTurn, "killed"))
	testutil.NoError(t, err)
	if got := strings.Join(types(evs), ","); got != "TurnStarted,AttemptStarted" {
		t.Fatalf("killed turn log %s", got)
	}
	res, err = e2.RunTurn(testutil.Context(t), TurnRequest{TurnID: "next", Session: "s1"}, script{})
	testutil.NoError(t, err)
	if res.Outcome != OutcomeSucceeded {
		t.Fatalf("next turn %+v", res)
	}
	if got := e2.Unfinished("s1"); len(got) != 1 {
		t.Fatalf("unfinished after next turn %v", got)
	}
}

// A partial log written directly with the store (a turn whose process died
// after its first decision) does not block the session.
func TestCrash_PartialLogFromStore(t *testing.T) {
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	e := newEngine(t, st, clock)
	ctx := testutil.Context(t)
	subj := events.MustSubject("main", events.AggTurn, "partial")
	ev := events.New("main", "partial", testutil.T0, events.TurnStarted{TurnID: "partial", Session: "s1", Chat: "direct",
		Requested: events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}, SelectionSource: "default",
		Chain:      []events.Candidate{{Provider: "anthropic", Model: "claude-opus-4-6", RouteOrigin: "requested"}},
		ConfigHash: "sha256:unknown", AttemptLimit: 40, StartedAt: events.Millis(testutil.T0)})
	_, err := st.Append(ctx, subj, 0, ev)
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))
	if got := e.Unfinished(""); len(got) != 1 || got[0] != "partial" {
		t.Fatalf("unfinished %v", got)
	}
	res, err := e.RunTurn(ctx, TurnRequest{Session: "s1"}, script{})
	testutil.NoError(t, err)
	if res.Outcome != OutcomeSucceeded {
		t.Fatalf("%+v", res)
	}
}

// Nothing secret reaches the stream: a provider error carrying an API key
// and a bearer token is stored redacted (previews) and hashed.
func TestSecrets_NeverAppended(t *testing.T) {
	st := testutil.Store(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	const key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	const bearer = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
	leak := &classify.ProviderError{Status: 401, Code: "authentication_error",
		Message: "invalid x-api-key " + key + " (sent Authorization: Bearer " + bearer + ")",
		Body:    `{"error":{"message":"bad key ` + key + `"}}`,
		Headers: map[string]string{"authorization": "Bearer " + bearer}}
	_, err := e.RunTurn(testutil.Context(t), TurnRequest{Session: "s1"}, script{"anthropic/claude-opus-4-6": leak, "openai/gpt-5": leak})
	var ex *ExhaustedError
	if !errors.As(err, &ex) {
		t.Fatalf("err %v", err)
	}
	raw := rawStream(t, st)
	for _, secret := range []string{key, bearer, "AbCdEfGhIjKlMnOp", "c2lnbmF0dXJl"} {
		if strings.Contains(raw, secret) {
			t.Fatalf("stream holds %q", secret)
		}
	}
	if !strings.Contains(raw, "REDACTED") {
		t.Fatalf("no redaction marker in the stream")
	}
	if strings.Contains(ex.Summary, key) {
		t.Fatalf("summary holds the key: %s", ex.Summary)
	}
}

// rawStream returns every stored message's bytes (headers and data), read
// by a foreign client (st opened with a listener and natstest's passwords).
func rawStream(t *testing.T, st events.Store) string {
	t.Helper()
	ctx := testutil.Context(t)
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	s, err := js.Stream(ctx, events.StreamName)
	testutil.NoError(t, err)
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	var b strings.Builder
	for seq := uint64(1); seq <= last; seq++ {
		m, err := s.GetMsg(ctx, seq)
		testutil.NoError(t, err)
		h, _ := json.Marshal(m.Header)
		b.Write(h)
		b.Write(m.Data)
	}
	return b.String()
}

// Session commands are events on the session subject and shape the next
// turn: /model with a profile pins it; /new keeps a user pin; /model
// default clears the selection.
func TestSessionCommands(t *testing.T) {
	e := newEngine(t, testutil.Store(t), testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	evs, err := e.SelectModel(ctx, "s1", events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"}, "user", nil, "anthropic:b")
	testutil.NoError(t, err)
	if got := strings.Join(types(evs), ","); got != "SessionModelSelected,SessionAuthPinned" {
		t.Fatalf("select events %s", got)
	}
	res, err := e.RunTurn(ctx, TurnRequest{Session: "s1"}, script{})
	testutil.NoError(t, err)
	if res.ProfileID != "anthropic:b" {
		t.Fatalf("answered with %q, want the pinned anthropic:b", res.ProfileID)
	}
	_, err = e.Reset(ctx, "s1", "new")
	testutil.NoError(t, err)
	if s := e.Session("s1"); s.Pin != "anthropic:b" || s.PinSource != "user" {
		t.Fatalf("after /new %+v", s)
	}
	_, err = e.ClearModel(ctx, "s1", "")
	testutil.NoError(t, err)
	if s := e.Session("s1"); s.Model != (events.ModelRef{}) {
		t.Fatalf("after /model default %+v", s)
	}
	_, err = e.CompleteCompaction(ctx, "s1")
	testutil.NoError(t, err)
	if s := e.Session("s1"); s.CompactionCount != 1 {
		t.Fatalf("after compaction %+v", s)
	}
	if _, err := e.PinProfile(ctx, "s1", "nobody:x", "user"); !errors.Is(err, policy.ErrUnknownProfile) {
		t.Fatalf("pin unknown: %v", err)
	}
}

// Without a config the engine refuses to run a turn.
func TestRunTurn_NoConfig(t *testing.T) {
	e, err := New(testutil.Context(t), testutil.Store(t), "main", WithClock(testutil.NewManualClock(testutil.T0)))
	testutil.NoError(t, err)
	defer e.Close()
	if _, err := e.RunTurn(testutil.Context(t), TurnRequest{Session: "s"}, script{}); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("err %v", err)
	}
}
