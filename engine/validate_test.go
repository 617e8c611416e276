package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// Ids that become aggregate keys are refused before anything is appended,
// with ErrBadRequest naming the field and the limit; an id at the limit
// runs a whole turn (its auto pin is a session-keyed event).
func TestKeys_OverlongIdsRefusedUpFront(t *testing.T) {
	st := testutil.Store(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	long := strings.Repeat("k", events.MaxKeyLen+1)
	before := testutil.LastSeq(t, st)

	check := func(name string, err error, field string) {
		t.Helper()
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "512") {
			t.Fatalf("%s: got %v, want ErrBadRequest naming %s and the limit", name, err, field)
		}
	}
	_, err := e.BeginTurn(ctx, TurnRequest{Session: long})
	check("BeginTurn session", err, "session")
	_, err = e.BeginTurn(ctx, TurnRequest{Session: "s", TurnID: long})
	check("BeginTurn turn id", err, "turn id")
	res, err := e.RunTurn(ctx, TurnRequest{Session: long}, script{})
	check("RunTurn session", err, "session")
	if res != nil {
		t.Fatalf("RunTurn returned a result for a refused turn: %+v", res)
	}
	_, err = e.SelectModel(ctx, long, events.ModelRef{Provider: "openai", Model: "gpt-5"}, "", nil, "")
	check("SelectModel session", err, "session")
	_, err = e.SelectModel(ctx, "s", events.ModelRef{Provider: "openai", Model: "gpt-5"}, "", nil, long)
	check("SelectModel profile", err, "profile")
	_, err = e.SelectModel(ctx, "s", events.ModelRef{Provider: "openai", Model: long}, "", nil, "")
	check("SelectModel model", err, "model")
	_, err = e.SelectModel(ctx, "s", events.ModelRef{Provider: "openai", Model: "gpt-5"}, "auto", &events.ModelRef{Provider: "openai", Model: long}, "")
	check("SelectModel origin", err, "origin")
	_, err = e.PinProfile(ctx, "s", long, "")
	check("PinProfile profile", err, "profile")
	_, err = e.Reset(ctx, long, "new")
	check("Reset session", err, "session")
	_, err = e.CompleteCompaction(ctx, long)
	check("CompleteCompaction session", err, "session")
	if _, err := e.BeginTurn(ctx, TurnRequest{Session: "bad\xffutf8"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("invalid UTF-8 session: %v", err)
	}
	if got := testutil.LastSeq(t, st); got != before {
		t.Fatalf("refused requests appended: last seq %d → %d", before, got)
	}
	if u := e.Unfinished(""); len(u) != 0 {
		t.Fatalf("unfinished turns: %v", u)
	}

	// At the limit everything is stored, through to the success's auto pin.
	edge := strings.Repeat("k", events.MaxKeyLen)
	r, err := e.RunTurn(ctx, TurnRequest{Session: edge, TurnID: strings.Repeat("t", events.MaxKeyLen)}, script{})
	testutil.NoError(t, err)
	if r.Outcome != OutcomeSucceeded || e.Session(edge).Pin == "" {
		t.Fatalf("turn at the key limit: outcome %s, pin %q", r.Outcome, e.Session(edge).Pin)
	}
}

// ValidateKey's verdict on each kind of id, in the words a refusal shows
// after the field's name ("" = accepted).
func TestValidateKey(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"agent:main:whatsapp:+1 555 0100", ""},
		{"ümlaut ☃", ""},
		{"openai:default", ""},
		{"", "is empty"},
		{" ", `" " is only white space`},
		{"\t\u00a0\u3000", `"\t\u00a0\u3000" is only white space`},
		{"\u200b\ufeff", `"\u200b\ufeff" is only invisible characters (white space and format characters such as U+200B, U+FEFF)`},
		{" \u200d", `" \u200d" is only invisible characters (white space and format characters such as U+200B, U+FEFF)`},
		{"a\nb", "holds the control character U+000A at byte 1"},
		{"red\x1b[31m", "holds the control character U+001B at byte 3"},
		{"x\u0085", "holds the control character U+0085 at byte 1"},
		{"user\u202eexe.txt", "holds the bidirectional or line-separating character U+202E at byte 4"},
		{"a\u2066b", "holds the bidirectional or line-separating character U+2066 at byte 1"},
		{"a\u200fb", "holds the bidirectional or line-separating character U+200F at byte 1"},
		{"line\u2028two", "holds the bidirectional or line-separating character U+2028 at byte 4"},
		{"family \U0001F468\u200d\U0001F469", ""},
		{"bad\xff", "is not valid UTF-8"},
		{strings.Repeat("k", events.MaxKeyLen+1), "is 513 bytes; the limit is 512"},
	} {
		err := ValidateKey(events.AggSession, c.key)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("ValidateKey(%q) = %v, want %q", c.key, err, c.want)
		}
	}
}

// ValidateAgent's verdict on agent ids, in the config's words for a
// wildcard, white space, a control character or a bidirectional one ("" =
// accepted).
func TestValidateAgent(t *testing.T) {
	for _, c := range []struct{ agent, want string }{
		{"main", ""},
		{"scn-storm.1_a@b", ""},
		{"", "is empty"},
		{"*", `"*" contains a wildcard (* or >); name one agent id exactly`},
		{"a.>", `"a.>" contains a wildcard (* or >); name one agent id exactly`},
		{"my agent", `"my agent" contains whitespace or control characters`},
		{"a\x1b", `"a\x1b" contains whitespace or control characters`},
		{"gw\u202e1", `"gw\u202e1" holds the bidirectional or line-separating character U+202E at byte 2`},
		{"bad\xff", "is not valid UTF-8"},
		{strings.Repeat("a", events.MaxAgentLen+1), "is 129 bytes; the limit is 128"},
	} {
		err := ValidateAgent(c.agent)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("ValidateAgent(%q) = %v, want %q", c.agent, err, c.want)
		}
	}
	if err := ValidateTurnRequest(TurnRequest{Session: "s", Agent: "*"}); fmt.Sprint(err) != `engine: bad request: agent "*" contains a wildcard (* or >); name one agent id exactly` {
		t.Errorf("ValidateTurnRequest agent *: %v", err)
	}
}

// A provider/model the config would refuse is refused by ParseModelRef
// and CheckModelRef in the config's words, naming the field and the part.
func TestModelRef_ConfigRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"openai/gpt-5", ""},
		{"openrouter/meta/llama@free", ""},
		{"*/>", `engine: bad request: model "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`},
		{"openai/gpt-*", `engine: bad request: model "openai/gpt-*": model "gpt-*" contains a wildcard (* or >); name one model exactly`},
		{"openai/a>b", `engine: bad request: model "openai/a>b": model "a>b" contains a wildcard (* or >); name one model exactly`},
		{" openai/gpt-5", `engine: bad request: model " openai/gpt-5": provider " openai" contains whitespace or control characters`},
		{"openai/gpt\x1b[2J", `engine: bad request: model "openai/gpt\x1b[2J": model "gpt\x1b[2J" contains whitespace or control characters`},
	} {
		_, err := ParseModelRef(c.in)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("ParseModelRef(%q) = %v\nwant %s", c.in, err, c.want)
		}
	}
	err := CheckModelRef("origin", events.ModelRef{Provider: "*", Model: ">"})
	if want := `engine: bad request: origin "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`; fmt.Sprint(err) != want {
		t.Errorf("CheckModelRef origin = %v, want %s", err, want)
	}
	_, _, err = ParseModelSelection("*/>@openai:a")
	if want := `engine: bad request: model "*/>": provider "*" contains a wildcard (* or >); name one provider exactly`; fmt.Sprint(err) != want {
		t.Errorf("ParseModelSelection = %v, want %s", err, want)
	}
}

// The by of an auth order: one line of 1..MaxByLen bytes.
func TestCheckBy(t *testing.T) {
	for _, c := range []struct{ by, want string }{
		{"ops@example.com", ""},
		{"Jane Doe", ""},
		{"", "engine: bad request: by is empty"},
		{"  ", `engine: bad request: by "  " is only white space`},
		{"x\nFAKE LINE", "engine: bad request: by holds the control character U+000A at byte 1"},
		{"\x1b[31m", "engine: bad request: by holds the control character U+001B at byte 0"},
		{strings.Repeat("b", 1040000), "engine: bad request: by is 1040000 bytes; the limit is 128"},
		{"b\xff", "engine: bad request: by is not valid UTF-8"},
	} {
		err := CheckBy(c.by)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("CheckBy(%.20q) = %v, want %q", c.by, err, c.want)
		}
	}
}

// Real provider model ids are models, whatever '@', ':' or '/' they hold;
// only an '@' that starts a provider:name profile id splits off a pin.
func TestParseModelSelection(t *testing.T) {
	for _, c := range []struct {
		in, model, profile string
		bad                string // the error; "" = parses
	}{
		{in: "openai/gpt-5", model: "openai/gpt-5"},
		{in: "openai/gpt-5@openai:api-key-backup", model: "openai/gpt-5", profile: "openai:api-key-backup"},
		{in: "openai-codex/gpt-5@openai-codex:me@example.com", model: "openai-codex/gpt-5", profile: "openai-codex:me@example.com"},
		{in: "openrouter/meta/llama@openrouter:a", model: "openrouter/meta/llama", profile: "openrouter:a"},
		{in: "openrouter/meta-llama/llama-3.1-8b-instruct:free", model: "openrouter/meta-llama/llama-3.1-8b-instruct:free"},
		{in: "openrouter/meta-llama/llama-3.1-8b-instruct:free@openrouter:me@x.io", model: "openrouter/meta-llama/llama-3.1-8b-instruct:free", profile: "openrouter:me@x.io"},
		{in: "fireworks/accounts/fireworks/models/llama-v3p1-405b-instruct", model: "fireworks/accounts/fireworks/models/llama-v3p1-405b-instruct"},
		{in: "fireworks/accounts/fireworks/models/llama-v3p1-405b-instruct@fireworks:default", model: "fireworks/accounts/fireworks/models/llama-v3p1-405b-instruct", profile: "fireworks:default"},
		{in: "amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", model: "amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"},
		{in: "amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0@amazon-bedrock:work", model: "amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", profile: "amazon-bedrock:work"},
		{in: "google/models/gemini-1.5-pro", model: "google/models/gemini-1.5-pro"},
		{in: "google/models/gemini-1.5-pro@google:me@example.com", model: "google/models/gemini-1.5-pro", profile: "google:me@example.com"},
		{in: "cloudflare/@cf/meta/llama-3-8b-instruct", model: "cloudflare/@cf/meta/llama-3-8b-instruct"},
		{in: "cloudflare/@cf/meta/llama-3-8b-instruct@cloudflare:work", model: "cloudflare/@cf/meta/llama-3-8b-instruct", profile: "cloudflare:work"},
		{in: "vertex/claude-3-5-sonnet@20240620", model: "vertex/claude-3-5-sonnet@20240620"},
		{in: "vertex/claude-3-5-sonnet@20240620@vertex:work", model: "vertex/claude-3-5-sonnet@20240620", profile: "vertex:work"},
		{in: "vertex/claude-3-5-sonnet@20240620@vertex:me@example.com", model: "vertex/claude-3-5-sonnet@20240620", profile: "vertex:me@example.com"},
		{in: "openai/gpt-5@nope", model: "openai/gpt-5@nope"}, // not provider:name: part of the model
		{in: "openai/gpt-5@", bad: `engine: bad request: model "openai/gpt-5@" ends in @ with no profile after it (a profile is provider:name)`},
		{in: "vertex/claude@20240620@", bad: `engine: bad request: model "vertex/claude@20240620@" ends in @ with no profile after it (a profile is provider:name)`},
		{in: "gpt-5@openai:a", bad: `engine: bad request: model "gpt-5@openai:a" is not provider/model[@profile]`},
		{in: "openai/@openai:a", bad: `engine: bad request: model "openai/@openai:a" is not provider/model[@profile]`},
		{in: "openai/", bad: `engine: bad request: model "openai/" is not provider/model[@profile]`},
		{in: "/gpt-5", bad: `engine: bad request: model "/gpt-5" is not provider/model[@profile]`},
		{in: "", bad: `engine: bad request: model "" is not provider/model[@profile]`},
		{in: "lmstudio/My Model.gguf", bad: `engine: bad request: model "lmstudio/My Model.gguf": model "My Model.gguf" contains whitespace or control characters`},
		{in: "openai/gpt-*@openai:a", bad: `engine: bad request: model "openai/gpt-*": model "gpt-*" contains a wildcard (* or >); name one model exactly`},
		{in: "openai/" + strings.Repeat("m", MaxModelRefLen), bad: fmt.Sprintf("engine: bad request: model is %d bytes, longer than the %d bytes a provider/model may have", MaxModelRefLen+7, MaxModelRefLen)},
		{in: "openai/gpt-5@openai:" + strings.Repeat("k", 2*events.MaxKeyLen), bad: fmt.Sprintf("engine: bad request: model is %d bytes, longer than the %d bytes provider/model@profile may have", 20+2*events.MaxKeyLen, MaxModelRefLen+1+events.MaxKeyLen)},
	} {
		ref, p, err := ParseModelSelection(c.in)
		if c.bad != "" {
			if !errors.Is(err, ErrBadRequest) || err.Error() != c.bad {
				t.Errorf("%.80q: got %v, %q, %v\nwant %s", c.in, ref, p, err, c.bad)
			}
			continue
		}
		if err != nil || ref.String() != c.model || p != c.profile {
			t.Errorf("%q: got %q, %q, %v; want %q, %q", c.in, ref.String(), p, err, c.model, c.profile)
		}
	}
}

// Every appended commit is observed once; a command that appends nothing
// is not.
func TestWithAppendObserver(t *testing.T) {
	st := testutil.Store(t)
	var n atomic.Int64
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0), WithAppendObserver(func(d time.Duration) {
		if d < 0 {
			t.Errorf("negative latency %v", d)
		}
		n.Add(1)
	}))
	ctx := testutil.Context(t)
	_, err := e.RunTurn(ctx, TurnRequest{Session: "s"}, script{"anthropic/claude-opus-4-6": rateLimit()})
	if err != nil {
		var ex *ExhaustedError
		if !errors.As(err, &ex) {
			testutil.NoError(t, err)
		}
	}
	if got, want := uint64(n.Load()), e.Stats().Commits; got != want || got == 0 {
		t.Fatalf("observed %d appends, engine committed %d", got, want)
	}
	_, err = e.PinProfile(ctx, "s2", "anthropic:b", "")
	testutil.NoError(t, err)
	before := n.Load()
	evs, err := e.PinProfile(ctx, "s2", "anthropic:b", "") // already pinned: no append
	testutil.NoError(t, err)
	if len(evs) != 0 {
		t.Fatalf("repeated pin appended %v", types(evs))
	}
	if n.Load() != before {
		t.Fatalf("a no-op command was observed")
	}
	if _, err := New(ctx, st, "main", WithAppendObserver(nil)); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("nil observer: %v", err)
	}
}

// An empty config (no primary) refuses turns as a missing configuration,
// naming the agent and the key to set.
func TestNoModelConfigured(t *testing.T) {
	st := testutil.Store(t)
	ctx := testutil.Context(t)
	e, err := New(ctx, st, "main", WithClock(testutil.NewManualClock(testutil.T0)))
	testutil.NoError(t, err)
	t.Cleanup(e.Close)
	l, err := config.Parse([]byte(`{}`), "empty")
	testutil.NoError(t, err)
	_, _, err = e.ApplyConfig(ctx, "empty", l)
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	_, err = e.BeginTurn(ctx, TurnRequest{Session: "s"})
	var nm *NoModelError
	if !errors.As(err, &nm) || !errors.Is(err, ErrNoConfig) || !errors.Is(err, policy.ErrNoModel) ||
		err.Error() != "no model configured for agent main: set agents.defaults.model.primary (or select a model for the session with /model)" {
		t.Fatalf("got %v", err)
	}
	if testutil.LastSeq(t, st) != before {
		t.Fatal("appended")
	}
}

// A decision the store refuses as invalid is ErrInvalidDecision, appends
// nothing and leaves the turn where it was: the same report succeeds once
// the store accepts it, and the attempt cannot be reported the other way
// in between.
func TestInvalidDecision_NothingAppendedTurnNotStuck(t *testing.T) {
	st := &testutil.RefusingStore{Store: testutil.Store(t)}
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	step, err := e.BeginTurn(ctx, TurnRequest{Session: "s", TurnID: "t1"})
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	st.Refuse.Store(true)
	_, err = e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: step.Next.Call.Attempt, OK: true})
	if !errors.Is(err, ErrInvalidDecision) || !errors.Is(err, events.ErrInvalidEnvelope) || errors.Is(err, ErrBadRequest) {
		t.Fatalf("got %v, want ErrInvalidDecision wrapping the store's error", err)
	}
	if testutil.LastSeq(t, st) != before {
		t.Fatal("a refused decision appended")
	}
	if ts, _ := e.Turn("t1"); ts.Phase != policy.PhaseRunning || !ts.InFlight {
		t.Fatalf("turn state changed: %+v", ts)
	}
	st.Refuse.Store(false)
	step, err = e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, OK: true})
	testutil.NoError(t, err)
	if step.Next.Kind != policy.NextDone {
		t.Fatalf("next %s, want done", step.Next.Kind)
	}
	if _, err := e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, Err: rateLimit()}); !errors.Is(err, ErrOutcomeMismatch) {
		t.Fatalf("a failure report after the success: %v", err)
	}
}

// stormStore refuses every append with a conflict while storm is set, as
// a guard that other writers keep moving would.
type stormStore struct {
	events.Store
	storm atomic.Bool
	tries atomic.Int32
}

func (s *stormStore) AppendCommit(ctx context.Context, req events.AppendRequest) (events.AppendResult, error) {
	if s.storm.Load() {
		s.tries.Add(1)
		last, err := s.Store.LastSeq(ctx, "")
		if err != nil {
			return events.AppendResult{}, err
		}
		return events.AppendResult{}, &events.ConflictError{Subject: req.Subject, Guard: req.Guard, Expected: req.Expected,
			Actual: last, ActualKnown: true, Code: events.CodeWrongLastSequence}
	}
	return s.Store.AppendCommit(ctx, req)
}

// A conflict storm ends: after the bounded retries the step fails with
// ErrConflictRetries (503 contention over HTTP), nothing is appended, the
// turn is where it was, and the same report succeeds once the storm is
// over — never a wrong decision.
func TestConflictStorm_BoundedRetriesThenContention(t *testing.T) {
	st := &stormStore{Store: testutil.Store(t)}
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0), WithConflictRetries(3))
	ctx := testutil.Context(t)
	step, err := e.BeginTurn(ctx, TurnRequest{Session: "s", TurnID: "t1"})
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	st.storm.Store(true)
	_, err = e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: step.Next.Call.Attempt, Err: rateLimit()})
	var cre *ConflictRetriesError
	if !errors.Is(err, ErrConflictRetries) || !errors.As(err, &cre) || cre.Tries != 4 {
		t.Fatalf("got %v, want ErrConflictRetries after 4 tries", err)
	}
	if n := st.tries.Load(); n != 4 {
		t.Fatalf("%d appends tried, want 4", n)
	}
	if testutil.LastSeq(t, st) != before {
		t.Fatal("appended during the storm")
	}
	if ts, _ := e.Turn("t1"); ts.Phase != policy.PhaseRunning || !ts.InFlight || ts.Current.Attempt != 1 {
		t.Fatalf("turn moved: %+v", ts)
	}
	st.storm.Store(false)
	step, err = e.ReportOutcome(ctx, "t1", AttemptReport{Attempt: 1, Err: rateLimit()})
	testutil.NoError(t, err)
	// The decision the storm held back, as without it: a same-profile
	// retry after the seeded back-off (785 ms from testutil.T0).
	if step.Replayed || step.Next.Kind != policy.NextWait || step.Next.ResumeAt != events.Millis(testutil.T0)+785 {
		t.Fatalf("after the storm: %+v", step.Next)
	}
}

// The rule of new ids holds where an id is created, not where one is
// looked up: a session an earlier build stored with a blank key (before
// the rule) takes commands and new turns; a new blank session does not,
// and a new turn id is always held to it. Nothing refused is appended.
func TestKeys_StoredBeforeTheRuleGoOn(t *testing.T) {
	st := testutil.Store(t)
	ctx := testutil.Context(t)
	legacy := events.New("main", " ", testutil.T0, events.SessionReset{Session: " ", Kind: "new"})
	_, err := st.Append(ctx, events.MustSubject("main", events.AggSession, " "), events.AnySeq, legacy)
	testutil.NoError(t, err)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	testutil.NoError(t, e.Sync(ctx))

	before := testutil.LastSeq(t, st)
	if _, err := e.Reset(ctx, "\t", "new"); !errors.Is(err, ErrBadRequest) || !strings.HasSuffix(err.Error(), `session "\t" is only white space`) {
		t.Fatalf("a new blank session: %v", err)
	}
	if _, err := e.BeginTurn(ctx, TurnRequest{Session: "s", TurnID: "t\n1"}); !errors.Is(err, ErrBadRequest) || !strings.HasSuffix(err.Error(), "turn id holds the control character U+000A at byte 1") {
		t.Fatalf("a new turn id with a line break: %v", err)
	}
	if got := testutil.LastSeq(t, st); got != before {
		t.Fatalf("refused requests appended: last seq %d → %d", before, got)
	}

	evs, err := e.Reset(ctx, " ", "reset")
	testutil.NoError(t, err)
	if len(evs) != 1 {
		t.Fatalf("a command on the stored blank session appended %d events", len(evs))
	}
	s, err := e.BeginTurn(ctx, TurnRequest{Session: " ", TurnID: "t-legacy"})
	testutil.NoError(t, err)
	if s.TurnID != "t-legacy" {
		t.Fatalf("turn on the stored blank session: %+v", s)
	}
}

// An agent id the rule refuses is refused a config only when the ledger
// has no message of it: an agent an earlier build stored goes on.
func TestApplyConfig_AgentStoredBeforeTheRuleGoesOn(t *testing.T) {
	st := testutil.Store(t)
	ctx := testutil.Context(t)
	legacy := events.New("old agent", "openai", testutil.T0, events.AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:a"}, By: "cli"})
	_, err := st.Append(ctx, events.MustSubject("old agent", events.AggOrder, "openai"), events.AnySeq, legacy)
	testutil.NoError(t, err)
	l, err := config.Parse([]byte(testutil.TwoProviderConfig), "test")
	testutil.NoError(t, err)
	if _, _, err := ApplyConfig(ctx, st, "old agent", "test", l, testutil.T0); err != nil {
		t.Fatalf("the stored agent: %v", err)
	}
	_, _, err = ApplyConfig(ctx, st, "new agent", "test", l, testutil.T0)
	if !errors.Is(err, ErrBadRequest) || !strings.HasSuffix(err.Error(), `agent "new agent" contains whitespace or control characters`) {
		t.Fatalf("a new agent with a space: %v", err)
	}
}

// A session an earlier build stored that only ever ran turns (no state of
// its own) is known by its turns: it takes new turns and commands.
func TestKeys_TurnsOnlySessionStoredBeforeTheRuleGoesOn(t *testing.T) {
	st := testutil.Store(t)
	ctx := testutil.Context(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	var started events.TurnStarted
	for _, p := range events.Examples() {
		if ts, ok := p.(events.TurnStarted); ok {
			started = ts
		}
	}
	started.TurnID, started.Session = "t-old", " "
	ev := events.New("main", "t-old", testutil.T0, started)
	_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-old"), events.AnySeq, ev)
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))
	if _, err := e.BeginTurn(ctx, TurnRequest{Session: " ", TurnID: "t-new"}); err != nil {
		t.Fatalf("a new turn of the stored turns-only session: %v", err)
	}
	if _, err := e.Reset(ctx, " ", "new"); err != nil {
		t.Fatalf("a command on the stored turns-only session: %v", err)
	}
}
