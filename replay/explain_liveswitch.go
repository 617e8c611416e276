package replay

import (
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Live switching and the transport recovery in words (rule revision 3).
// What became of a mark, and why a failure was not recovered, is told by
// the turn's later events (Explanation.rest).

// defaultMarks adds to marks the ids of c's LiveSwitchMarked events that a
// `/model default` made: a mark in a commit without a SessionModelSelected
// (engine.ClearDecision; a `/model` commit always starts with one).
func defaultMarks(c *commit, marks map[string]bool) {
	var ids []string
	for _, ev := range c.Events {
		switch ev.Data.(type) {
		case events.SessionModelSelected:
			return
		case events.LiveSwitchMarked:
			ids = append(ids, ev.ID)
		}
	}
	for _, id := range ids {
		marks[id] = true
	}
}

// markText words a pending live switch: who marked it (a `/model` or a
// `/model default`) and what became of it, from the turn's later events.
func markText(e events.LiveSwitchMarked, byDefault bool, rest []events.Event) string {
	who := fmt.Sprintf("the user selected %s%s while the turn ran", e.Model, atProfile(e.ProfileID))
	if byDefault {
		who = fmt.Sprintf("the user ran /model default while the turn ran (the session's selection cleared): a switch to the default primary %s", e.Model)
	}
	return who + ": " + markFate(rest)
}

// markFate says what became of a mark from the events after it: taken at
// the next step (a live_switch record or the hand-back), replaced by a
// later mark, or not taken because the turn ended first.
func markFate(rest []events.Event) string { return switchFate(rest, "marked, not taken") }

// switchFate is [markFate] with notTaken saying how a switch the turn did
// not take is named.
func switchFate(rest []events.Event, notTaken string) string {
	for _, ev := range rest {
		switch e := ev.Data.(type) {
		case events.FallbackStepped:
			if e.Decision == policy.DecisionLiveSwitch && e.FallbackStepFinalOutcome == policy.StepContinue {
				return "a pending live switch, recorded at the next step: the run continues there (the selection is the candidate it runs on, or an earlier one)"
			}
			if e.Decision == policy.DecisionLiveSwitch {
				return "a pending live switch, taken at the next step"
			}
		case events.TurnSwitched:
			return "a pending live switch, taken at the next step"
		case events.LiveSwitchMarked:
			return "a pending live switch, replaced by a later selection before the next step"
		case events.TurnSucceeded:
			return notTaken + ": the answer stood (no pin written)"
		case events.TurnStopped:
			return notTaken + ": the turn stopped"
		case events.TurnExhausted:
			return notTaken + ": the turn was exhausted"
		}
	}
	return "a pending live switch, taken at the next step"
}

// jumpAfter returns the model a live switch jumps to when the record
// right after a candidate_failed record is that jump ("" = none).
func jumpAfter(rest []events.Event) string {
	if len(rest) == 0 {
		return ""
	}
	if ls, ok := rest[0].Data.(events.FallbackStepped); ok && ls.Decision == policy.DecisionLiveSwitch {
		return ls.FallbackStepToModel
	}
	return ""
}

// transportWhy says why a failure that looks like a transport failure
// (reason timeout with no HTTP status, or one the gateway reported after
// a settled tool batch) was not continued as a transport recovery ("" =
// it was, or it does not look like one). recoveries is how many the turn
// made before it.
func transportWhy(e events.AttemptFailed, recoveries int, rest []events.Event) string {
	if e.Reason != policy.ReasonTimeout || e.Disposition != policy.DispositionFailover || (e.Error.Status != 0 && !e.ToolBatchSettled) {
		return ""
	}
	switched := false
next:
	for _, ev := range rest {
		switch s := ev.Data.(type) {
		case events.AttemptStarted:
			if policy.AttemptKind(s.Kind) == policy.KindTransportRecovery {
				return ""
			}
			break next
		case events.FallbackStepped:
			switched = switched || s.Decision == policy.DecisionLiveSwitch && s.FallbackStepFinalOutcome == policy.StepNextFallback
		case events.TurnSwitched:
			switched = true
		}
	}
	const no = "no transport recovery: "
	switch {
	case e.Error.Status != 0:
		return no + fmt.Sprintf("the provider answered (HTTP %d), so it is not a transport failure", e.Error.Status)
	case e.ReplayUnsafe:
		return no + "output or a tool call had started (a partial response or an unfinished tool batch)"
	case !e.ToolBatchSettled:
		return no + "the call did not continue the transcript after a settled tool batch"
	case recoveries >= policy.TransportRecoveryMax:
		return no + fmt.Sprintf("the turn's %d recoveries were used", policy.TransportRecoveryMax)
	case switched:
		return no + "the pending live switch was taken instead (the failure is not counted against the profile)"
	}
	return no + "the candidate's attempt limit was reached"
}

// openTurn keeps, by agent, the session of the explained turn while it
// runs: from its TurnStarted to its end.
func openTurn(open map[string]string, ev *events.Event) {
	switch e := ev.Data.(type) {
	case events.TurnStarted:
		open[ev.Agent] = e.Session
	case events.TurnSucceeded, events.TurnExhausted, events.TurnStopped, events.TurnSwitched:
		delete(open, ev.Agent)
	}
}

// duringTurn reports whether ev is a `/new` or `/reset` of the explained
// turn's session stored while the turn ran: the explanation shows it.
func duringTurn(open map[string]string, ev *events.Event) bool {
	_, reset := ev.Data.(events.SessionReset)
	s, ok := open[ev.Agent]
	return reset && ok && ev.Key == s
}

// resetText words a `/new` or `/reset` stored while the turn ran: from
// rule revision 3 the turn writes no automatic pin after it.
func resetText(e events.SessionReset, rules int) string {
	t := fmt.Sprintf("the user ran /%s while the turn ran: the session's automatic pin and automatic selection are cleared", e.Kind)
	if policy.RulesOf(rules) >= policy.RulesV3 {
		t += "; the turn writes no automatic pin after it"
	}
	return t
}
