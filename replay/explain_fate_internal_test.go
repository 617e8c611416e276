package replay

import (
	"testing"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// What became of a pending live switch, from the turn's events after it:
// a jump or a hand-back is taken, a live_switch record that continues (the
// selection is the candidate the run is on, or an earlier one: a new
// @profile of the same model) is recorded and the run goes on, an ending
// first leaves it not taken.
func TestSwitchFate(t *testing.T) {
	ls := func(outcome string) events.Event {
		return events.Event{Data: events.FallbackStepped{Decision: policy.DecisionLiveSwitch, FallbackStepFinalOutcome: outcome}}
	}
	for _, c := range []struct {
		name string
		rest []events.Event
		want string
	}{
		{"jump", []events.Event{ls(policy.StepNextFallback)}, "a pending live switch, taken at the next step"},
		{"continue", []events.Event{ls(policy.StepContinue)}, "a pending live switch, recorded at the next step: the run continues there (the selection is the candidate it runs on, or an earlier one)"},
		{"hand-back", []events.Event{{Data: events.TurnSwitched{}}}, "a pending live switch, taken at the next step"},
		{"answer first", []events.Event{{Data: events.TurnSucceeded{}}}, "not taken: the answer stood (no pin written)"},
	} {
		if got := switchFate(c.rest, "not taken"); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
