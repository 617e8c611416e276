package policy

import (
	"errors"
	"testing"

	"github.com/fledger/fledger/events"
)

// start2 starts a turn decided by the current rule revision, as the
// engine does.
func (h *harness) start2(sel Selection, chat string) Next {
	h.t.Helper()
	h.log = nil
	return h.apply(StartTurn(sel, h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: chat, Seed: 42, Rules: CurrentRules}))
}

// A turn records the revision it is decided by; revision 1 is recorded
// as absent, exactly as every build before issue 22 stored it, so replay
// of a stored turn re-decides the same bytes. A revision newer than this
// build is refused, at the start and at every later decision.
func TestRules_TurnStartedRecordsTheRevision(t *testing.T) {
	for _, tc := range []struct {
		in   Rules
		want int
	}{{0, 0}, {RulesV1, 0}, {RulesV2, 2}} {
		h := newHarness(t, testConfig())
		h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Chat: "direct", Rules: tc.in}))
		ts := h.payloads("TurnStarted")[0].(events.TurnStarted)
		if ts.Rules != tc.want || h.st.Rules != tc.want || RulesOf(h.st.Rules) != max(tc.in, RulesV1) {
			t.Errorf("rules %d: recorded %d, state %d", tc.in, ts.Rules, h.st.Rules)
		}
	}
	h := newHarness(t, testConfig())
	if _, err := StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "t", Session: "s1", Rules: CurrentRules + 1}); !errors.Is(err, ErrRulesTooNew) {
		t.Fatalf("start with a newer revision: %v", err)
	}
	h.start2(h.selectDefault(), "direct")
	st := h.st
	st.Rules = int(CurrentRules) + 1
	if _, err := OnOutcome(st, h.env(), failed(ReasonTimeout)); !errors.Is(err, ErrRulesTooNew) {
		t.Fatalf("outcome under a newer revision: %v", err)
	}
}
