package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// attemptProfiles lists the profile of every AttemptStarted of a turn.
func attemptProfiles(evs []events.Event) string {
	var out []string
	for _, ev := range evs {
		if a, ok := ev.Data.(events.AttemptStarted); ok {
			out = append(out, a.ProfileID)
		}
	}
	return strings.Join(out, ",")
}

// A stored order (AuthOrderSet) overrides auth.order in the rotation;
// clearing it returns to auth.order.
func TestSetAuthOrder_RotationFollowsStoredOrder(t *testing.T) {
	st := testutil.Store(t)
	clock := testutil.NewManualClock(testutil.T0)
	e := newEngine(t, st, clock)
	ctx := testutil.Context(t)
	fail := script{"anthropic/claude-opus-4-6": rateLimit()}

	res, err := e.RunTurn(ctx, TurnRequest{TurnID: "t1", Session: "s1"}, fail)
	testutil.NoError(t, err)
	if got := attemptProfiles(res.Events); got != "anthropic:a,anthropic:a,anthropic:a,anthropic:a,anthropic:b,openai:a" {
		t.Fatalf("auth.order turn tried %s", got)
	}

	evs, err := e.SetAuthOrder(ctx, "anthropic", []string{"anthropic:b", "anthropic:a"}, "test")
	testutil.NoError(t, err)
	if len(evs) != 1 || evs[0].Type != "AuthOrderSet" || evs[0].Aggregate != events.AggOrder || evs[0].Key != "anthropic" {
		t.Fatalf("set events %+v", evs)
	}
	if subj, _ := events.SubjectOf(&evs[0].Envelope); subj != "fledger.main.order.anthropic" {
		t.Fatalf("subject %s", subj)
	}
	if got := strings.Join(e.AuthOrder("anthropic"), ","); got != "anthropic:b,anthropic:a" {
		t.Fatalf("stored order %s", got)
	}
	clock.Advance(48 * time.Hour)
	res, err = e.RunTurn(ctx, TurnRequest{TurnID: "t2", Session: "s2"}, fail)
	testutil.NoError(t, err)
	if got := attemptProfiles(res.Events); got != "anthropic:b,anthropic:b,anthropic:b,anthropic:b,anthropic:a,openai:a" {
		t.Fatalf("stored-order turn tried %s", got)
	}

	evs, err = e.SetAuthOrder(ctx, "anthropic", nil, "test")
	testutil.NoError(t, err)
	if len(evs) != 1 || len(evs[0].Data.(events.AuthOrderSet).ProfileIDs) != 0 || e.AuthOrder("anthropic") != nil {
		t.Fatalf("clear events %+v, stored %v", evs, e.AuthOrder("anthropic"))
	}
	clock.Advance(48 * time.Hour)
	res, err = e.RunTurn(ctx, TurnRequest{TurnID: "t3", Session: "s3"}, fail)
	testutil.NoError(t, err)
	if got := attemptProfiles(res.Events); got != "anthropic:a,anthropic:a,anthropic:a,anthropic:a,anthropic:b,openai:a" {
		t.Fatalf("cleared-order turn tried %s", got)
	}

	// A second engine (and a fresh fold) sees the same stored order.
	f := NewFold("main")
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		f.Apply(ev.Seq, "", []events.Event{ev})
	}
	if f.StoredOrder("anthropic") != nil {
		t.Fatalf("fold stored order %v after clear", f.StoredOrder("anthropic"))
	}
}

func TestSetAuthOrder_Refused(t *testing.T) {
	e := newEngine(t, testutil.Store(t), testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	cases := []struct {
		ids  []string
		want error
		name string
	}{
		{[]string{"anthropic:a", "anthropic:zz"}, policy.ErrUnknownProfile, "anthropic:zz"},
		{[]string{"anthropic:a", "openai:a"}, policy.ErrBadOrder, "openai:a"},
		{[]string{"anthropic:a", "anthropic:a"}, policy.ErrBadOrder, "anthropic:a"},
	}
	for _, c := range cases {
		_, err := e.SetAuthOrder(ctx, "anthropic", c.ids, "test")
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), `"`+c.name+`"`) {
			t.Errorf("SetAuthOrder(%v): %v, want %v naming %q", c.ids, err, c.want, c.name)
		}
	}
	if _, err := e.SetAuthOrder(ctx, "", nil, "test"); !errors.Is(err, ErrBadRequest) {
		t.Errorf("empty provider: %v", err)
	}
	if o := e.AuthOrders(); len(o) != 0 {
		t.Errorf("refused orders stored: %v", o)
	}
}

// A provider no configured profile has is refused, set or clear, naming
// the configured providers; an order stored under an earlier config for a
// provider the config in force no longer has can still be cleared (and
// not set again).
func TestSetAuthOrder_UnknownProvider(t *testing.T) {
	st := testutil.Store(t)
	e := newEngine(t, st, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	before := testutil.LastSeq(t, st)
	for _, c := range []struct {
		provider string
		ids      []string
	}{
		{"*", nil}, {">", nil}, {"anthr.opic", nil}, {"no.such>provider", nil}, {"groq", []string{}},
		{"anthropic2", []string{"anthropic:a"}},
	} {
		_, err := e.SetAuthOrder(ctx, c.provider, c.ids, "test")
		if !errors.Is(err, policy.ErrBadOrder) || !strings.Contains(err.Error(), `"`+c.provider+`"`) || !strings.Contains(err.Error(), "configured providers: anthropic, openai") {
			t.Errorf("SetAuthOrder(%q, %v): %v, want ErrBadOrder naming it and the configured providers", c.provider, c.ids, err)
		}
	}
	if now := testutil.LastSeq(t, st); now != before {
		t.Fatalf("refused orders appended (%d → %d)", before, now)
	}

	_, err := e.SetAuthOrder(ctx, "openai", []string{"openai:a"}, "test")
	testutil.NoError(t, err)
	l, err := config.Parse([]byte(`
auth:
  profiles:
    "anthropic:a": {provider: anthropic, type: api_key}
agents:
  defaults:
    model: {primary: anthropic/claude-opus-4-6}
`), "no-openai")
	testutil.NoError(t, err)
	_, _, err = e.ApplyConfig(ctx, "no-openai", l)
	testutil.NoError(t, err)
	if _, err := e.SetAuthOrder(ctx, "openai", []string{"openai:a"}, "test"); !errors.Is(err, policy.ErrBadOrder) {
		t.Fatalf("set of a provider the config no longer has: %v", err)
	}
	if _, err := e.SetAuthOrder(ctx, "openai", nil, "test"); err != nil {
		t.Fatalf("clearing a stored order of a provider the config no longer has: %v", err)
	}
	if _, err := e.SetAuthOrder(ctx, "openai", nil, "test"); !errors.Is(err, policy.ErrBadOrder) {
		t.Fatalf("a second clear, with no order stored: %v", err)
	}
}
