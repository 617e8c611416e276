package policy

import (
	"fmt"

	"github.com/fledger/fledger/events"
)

// Live model switching (seed 000 "Session overrides and live model
// switching"; reference §7 step 7.6; rule revision 3).

// MarkLiveSwitch decides the pending live switch a model selection marks:
// only an explicit user selection (source user: `/model`, the picker,
// session_status(model=…), sessions.patch) marks one, on the session's
// running turn (the latest started of those decided by revision 3 or
// later that is running or waiting); system-driven changes (any other
// source, fallback, heartbeat, compaction) never do. It returns nothing
// when no such turn runs.
func MarkLiveSwitch(turns []TurnState, session string, m ModelRef, profile string, source SelectionSource) []events.Payload {
	if source != SourceUser {
		return nil
	}
	var pick *TurnState
	for i := range turns {
		t := &turns[i]
		if t.Session != session || RulesOf(t.Rules) < RulesV3 || (t.Phase != PhaseRunning && t.Phase != PhaseWaiting) {
			continue
		}
		if pick == nil || t.StartedAt > pick.StartedAt || (t.StartedAt == pick.StartedAt && t.TurnID > pick.TurnID) {
			pick = t
		}
	}
	if pick == nil {
		return nil
	}
	return []events.Payload{events.LiveSwitchMarked{TurnID: pick.TurnID, Session: session, Model: m, ProfileID: profile, Source: string(source)}}
}

// deriveSwitch gives a running turn of rule revision 5 or later the
// pending live switch of a user model selection stored after its start
// was decided and after its last mark and live_switch record: the
// LiveSwitchMarked the selection would have written had the state it was
// decided on held the turn (MarkLiveSwitch). Such a selection raced the
// turn's start (both decided at once, the start under the turn's subject
// and the selection under the session's, neither seeing the other), or it
// marked another running turn of the session, the latest started. It
// replaces an older pending mark, as a later mark would. The switch is
// taken like a marked one at this step and recorded (a live_switch record
// or the hand-back), so it is derived once; it is never stored as a mark.
// A turn whose start's sequence is not known (a what-if walk of payloads)
// derives nothing.
func (d *decider) deriveSwitch() {
	st, s := &d.st, d.session
	if !d.v5() || st.TurnID == "" || st.StartSeq == 0 || (st.Phase != PhaseRunning && st.Phase != PhaseWaiting) {
		return
	}
	if s.SelectSeq == 0 || s.SelectSeq <= max(st.StartBasis, st.MarkSeq, st.SwitchSeenSeq) ||
		s.Model == (ModelRef{}) || SelectionSource(s.Source) != SourceUser {
		return
	}
	st.Switch = &events.LiveSwitchMarked{TurnID: st.TurnID, Session: st.Session, Model: s.Model,
		ProfileID: s.SelectProfile, Source: string(SourceUser)}
}

// MarkDefaultSwitch decides the pending live switch a user's `/model
// default` marks when it clears the session's model override (cleared
// true): a switch to the agent's configured default primary (the agent's
// own primary, else agents.defaults.model.primary), taken like any other
// (a later candidate: jump; outside the chain: switched; the current or
// an earlier one: continue). A `/model default` that clears no override
// leaves the model as it was and marks nothing.
func (c Config) MarkDefaultSwitch(turns []TurnState, session, agent string, cleared bool) []events.Payload {
	primary := c.configuredPrimary(agent)
	if !cleared || primary == (ModelRef{}) {
		return nil
	}
	return MarkLiveSwitch(turns, session, primary, "", SourceUser)
}

// LiveSwitchText is the error text of a taken live switch (OpenClaw's
// LiveSessionModelSwitchError): where the selected model is relative to
// the candidate the run is on.
func LiveSwitchText(selected ModelRef, where string) string {
	return fmt.Sprintf("LiveSessionModelSwitchError: %s was selected during the run; %s", selected, where)
}

// Where a live switch's selected model is (LiveSwitchText).
const (
	switchLater    = "it is a later candidate of the chain"
	switchOutside  = "it is not in the candidate chain"
	switchCurrent  = "it is the current or an earlier candidate"
	switchHandback = -1
)

// switchTarget is the chain index of the pending switch's model, or
// switchHandback when it is outside the chain.
func (d *decider) switchTarget() int {
	m := d.st.Switch.Model
	for j, c := range d.st.Chain {
		if c.Provider == m.Provider && c.Model == m.Model {
			return j
		}
	}
	return switchHandback
}

// switchRecord is the live_switch model_fallback_decision of the pending
// switch taken at candidate i: reason unknown (OpenClaw's reason on the
// live-switch path), fallbackStepToModel the candidate jumped to (j ≥ 0),
// or final outcome continue.
func (d *decider) switchRecord(i, j int, where string) events.FallbackStepped {
	sel := d.st.Switch.Model
	r := d.record(DecisionLiveSwitch, i)
	r.Reason, r.ErrorPreview = ReasonUnknown, LiveSwitchText(sel, where)
	r.FallbackStepType = "fallback_step"
	r.FallbackStepFromModel = ModelRef{Provider: r.CandidateProvider, Model: r.CandidateModel}.String()
	r.FallbackStepFromReason, r.FallbackStepFromDetail, r.FallbackStepChainPosition = ReasonUnknown, r.ErrorPreview, i+1
	r.FallbackStepFinalOutcome = StepContinue
	r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s selected, run continues on %s", r.Decision, sel, r.FallbackStepFromModel)
	if j >= 0 {
		n := d.st.Chain[j]
		r.NextCandidateProvider, r.NextCandidateModel, r.NextCandidateRouteOrigin = n.Provider, n.Model, n.RouteOrigin
		r.FallbackStepToModel = ModelRef{Provider: n.Provider, Model: n.Model}.String()
		r.FallbackStepFinalOutcome = StepNextFallback
		r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (%s) -> %s", r.Decision, r.FallbackStepFromModel, ReasonUnknown, r.FallbackStepToModel)
	}
	return r
}

// takeSwitch takes the turn's pending live switch at this step, the run
// being on candidate i (-1 between chain passes) after failed (nil when
// the step is the end of a wait): a later candidate of the chain is
// called next with kind live_switch, no candidate in between tried (the
// failed candidate's candidate_failed record names it as the next); a
// model outside the chain ends the turn (TurnSwitched, Next switch) after
// the failed candidate's candidate_failed record with no next
// (handbackRecord). For the current or an earlier candidate the switch is
// recorded (final outcome continue) and ok is false: the run continues as
// it would have.
// record, when set, records the failed attempt's profile failure before a
// jump or a hand-back.
func (d *decider) takeSwitch(i int, failed *Outcome, record func()) (Decision, bool) {
	if !d.v3() || d.st.Switch == nil {
		return Decision{}, false
	}
	sw := *d.st.Switch
	at := max(i, 0)
	j := d.switchTarget()
	switch {
	case j == switchHandback:
		if record != nil {
			record()
		}
		if failed != nil && i >= 0 {
			d.emit(d.handbackRecord(i, *failed))
		} else {
			// At the end of a whole-chain wait the failures' records
			// were written before it: the switch's own record says
			// switched.
			d.emit(d.switchedRecord(at))
		}
		msg := LiveSwitchText(sw.Model, switchOutside)
		d.emit(events.TurnSwitched{TurnID: d.st.TurnID, Session: d.st.Session, Model: sw.Model, ProfileID: sw.ProfileID,
			Message: msg, Attempts: d.st.Attempts, DurationMs: d.now() - d.st.StartedAt})
		return d.done(Next{Kind: NextSwitch, SwitchTo: sw.Model, ProfileID: sw.ProfileID, Message: msg}), true
	case j > i:
		if record != nil {
			record()
		}
		if failed != nil && i >= 0 {
			r := d.failedRecord(i, *failed)
			n := d.st.Chain[j]
			r.NextCandidateProvider, r.NextCandidateModel, r.NextCandidateRouteOrigin = n.Provider, n.Model, n.RouteOrigin
			r.FallbackStepToModel = ModelRef{Provider: n.Provider, Model: n.Model}.String()
			r.FallbackStepFinalOutcome = StepNextFallback
			r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (%s) -> %s", r.Decision, r.FallbackStepFromModel, failed.Reason, r.FallbackStepToModel)
			d.emit(r)
		}
		d.emit(d.switchRecord(at, j, switchLater))
		return d.advance(j, KindLiveSwitch), true
	}
	d.emit(d.switchRecord(at, -1, switchCurrent))
	return Decision{}, false
}

// switchedRecord is the live_switch model_fallback_decision of a switch
// outside the chain taken at candidate i with no failure to record with
// it (the end of a whole-chain overload wait): no next candidate, final
// outcome switched.
func (d *decider) switchedRecord(i int) events.FallbackStepped {
	r := d.switchRecord(i, -1, switchOutside)
	r.FallbackStepFinalOutcome = StepSwitched
	r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s selected, outside the chain -> %s", r.Decision, d.st.Switch.Model, StepSwitched)
	return r
}

// handbackRecord is the candidate_failed model_fallback_decision of
// candidate i failing with out when a live switch outside the chain hands
// the turn back: no next candidate (OpenClaw throws the
// LiveSessionModelSwitchError there and records nothing more), final
// outcome switched.
func (d *decider) handbackRecord(i int, out Outcome) events.FallbackStepped {
	r := d.failedRecord(i, out)
	r.NextCandidateProvider, r.NextCandidateModel, r.NextCandidateRouteOrigin, r.FallbackStepToModel = "", "", "", ""
	r.FallbackStepFinalOutcome = StepSwitched
	r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (%s) -> %s", r.Decision, r.FallbackStepFromModel, out.Reason, StepSwitched)
	return r
}

// failureOutcome is the Outcome a recorded AttemptFailed carries, as far
// as a candidate_failed record needs it.
func failureOutcome(e events.AttemptFailed) Outcome {
	return Outcome{Reason: e.Reason, Status: e.Status, Code: e.Error.Code, Error: e.Error}
}

// selectionReplaced reports whether the selection the turn ran on was
// replaced while it ran (rule revision 3): any user session command
// (select, clear, /new or /reset, user pin) stored after the turn started
// ([UserCommand]), a live switch it did not take,
// a stored selection of another model (a cron turn's session selection
// is not its own), or, for a turn that ran on the session's stored
// selection (user, legacy, auto), that selection cleared (`/model
// default`, whatever became of the switch it marked). The turn then
// writes no auto pin (seed 004's lesson: recovery owns only the fields it
// wrote; issue 23: a turn never writes a pin or selection that a later
// user command replaced).
func (d *decider) selectionReplaced(selected ModelRef) bool {
	if d.st.Switch != nil || d.commandedSince() {
		return true
	}
	s := d.session
	switch SelectionSource(d.st.SelectionSource) {
	case SourceCron:
		return false
	case SourceUser, SourceLegacy, SourceAuto:
		if s.Model == (ModelRef{}) {
			return true
		}
	}
	return s.Model != (ModelRef{}) && s.Model != selected
}

// selected is the model the turn runs for: the requested model, or from
// revision 3 the model a taken live switch jumped to.
func (d *decider) selected() ModelRef {
	if d.v3() && d.st.Switched != (ModelRef{}) {
		return d.st.Switched
	}
	return d.st.Requested
}
