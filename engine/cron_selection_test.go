package engine

import (
	"errors"
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A cron model is one turn's: a session selection with source cron (which
// would make every later turn of the session a cron run) is refused with
// ErrBadRequest, as is a source no selection has, and nothing is
// appended; a begin's selection is held to the same rule.
func TestSelectModel_CronSourceRefused(t *testing.T) {
	st, e, ctx := manualEngine(t)
	const cronRefused = "engine: bad request: source cron is not a session's selection: a cron model applies to one turn only; begin that turn with source cron and its model"
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"session cron", func() error {
			_, err := e.SelectModel(ctx, "cr1", gpt5, "cron", nil, "")
			return err
		}, cronRefused},
		{"session cron with a profile", func() error {
			_, err := e.SelectModel(ctx, "cr1", gpt5, "cron", nil, "openai:a")
			return err
		}, cronRefused},
		{"unknown source", func() error {
			_, err := e.SelectModel(ctx, "cr1", gpt5, "manual", nil, "")
			return err
		}, `engine: bad request: source "manual" is not user|default|auto|legacy`},
		{"begin's selection cron", func() error {
			_, err := e.BeginTurn(ctx, TurnRequest{TurnID: "c1", Session: "cr1", Select: &ModelSelection{Model: gpt5, Source: "cron"}})
			return err
		}, cronRefused},
	} {
		got, _, _ := appended(t, st, func() {
			err := c.call()
			if !errors.Is(err, ErrBadRequest) || err.Error() != c.want {
				t.Errorf("%s: %v, want %s", c.name, err, c.want)
			}
		})
		if got != nil {
			t.Errorf("%s appended %v", c.name, got)
		}
	}
	if s := e.Session("cr1"); s.Model != (policy.ModelRef{}) || s.Source != "" {
		t.Fatalf("session after the refusals: %+v", s)
	}
}

// History is forever: a SessionModelSelected with source cron stored by an
// earlier build still folds into the session, and the session's next turn
// starts from it as it did then (a cron run of that model).
func TestSelectModel_StoredCronSelectionStillFolds(t *testing.T) {
	st, e, ctx := manualEngine(t)
	ev := events.New("main", "cr1", testutil.T0, events.SessionModelSelected{Session: "cr1", Model: gpt5, Source: "cron"})
	_, err := st.Append(ctx, events.MustSubject("main", events.AggSession, "cr1"), events.AnySeq, ev)
	testutil.NoError(t, err)
	testutil.NoError(t, e.Sync(ctx))
	if s := e.Session("cr1"); s.Model != gpt5 || s.Source != policy.SourceCron {
		t.Fatalf("stored cron selection folded to %+v", s)
	}
	step, err := e.BeginTurn(ctx, TurnRequest{TurnID: "c1", Session: "cr1"})
	testutil.NoError(t, err)
	if c := step.Next.Call; c == nil || c.Provider != "openai" || c.Model != "gpt-5" {
		t.Fatalf("first step after a stored cron selection: %+v", step.Next)
	}
	for ev, err := range st.Read(ctx, 1) {
		testutil.NoError(t, err)
		if ts, ok := ev.Data.(events.TurnStarted); ok && ts.SelectionSource != "cron" {
			t.Fatalf("turn started with selection source %q, want cron", ts.SelectionSource)
		}
	}
}
