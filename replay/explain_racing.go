package replay

import (
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// racingSelection is a user selection an explained turn of rule revision
// 5 or later takes as a derived live switch (policy's deriveSwitch):
// stored after the turn's start was decided (basis) and either before the
// start itself (before) or while the turn ran with no LiveSwitchMarked of
// the turn in its commit. No mark names it, so the explanation shows the
// selection itself.
type racingSelection struct {
	basis  uint64
	before bool
	// other is the turn its commit marked instead (the session's latest
	// started), "" when it marked none.
	other string
}

// racingSelections finds an explained turn's racing selections while
// Explain walks the stream.
type racingSelections struct {
	turnID string
	// last is each session's last user selection (agent + "\x00" +
	// session), a candidate until the turn's start shows its basis.
	last  map[string]events.Event
	basis uint64
	v5    bool
	found map[string]racingSelection // selection event id → how it raced
}

func newRacingSelections(turnID string) *racingSelections {
	return &racingSelections{turnID: turnID, last: map[string]events.Event{}, found: map[string]racingSelection{}}
}

// atStart returns, for the explained turn's TurnStarted, the user
// selection of its session stored after its basis (ok false: none).
func (r *racingSelections) atStart(ev *events.Event) (events.Event, bool) {
	ts, ok := ev.Data.(events.TurnStarted)
	if !ok || ts.TurnID != r.turnID {
		return events.Event{}, false
	}
	r.basis, r.v5 = ev.Basis, policy.RulesOf(ts.Rules) >= policy.RulesV5
	sel, ok := r.last[ev.Agent+"\x00"+ts.Session]
	if !r.v5 || !ok || sel.Seq <= ev.Basis {
		return events.Event{}, false
	}
	r.found[sel.ID] = racingSelection{basis: ev.Basis, before: true}
	return sel, true
}

// during reports whether ev, in commit c, is a user selection of the
// explained turn's session (open names it while the turn runs) with no
// mark of the turn beside it; it notes every user selection as its
// session's last.
func (r *racingSelections) during(c *commit, open map[string]string, ev *events.Event) bool {
	sel, ok := ev.Data.(events.SessionModelSelected)
	if !ok || policy.SelectionSource(sel.Source) != policy.SourceUser {
		return false
	}
	r.last[ev.Agent+"\x00"+ev.Key] = *ev
	if s, running := open[ev.Agent]; !running || s != ev.Key || !r.v5 {
		return false
	}
	rs := racingSelection{basis: r.basis}
	for _, o := range c.Events {
		if m, ok := o.Data.(events.LiveSwitchMarked); ok {
			if m.TurnID == r.turnID {
				return false
			}
			rs.other = m.TurnID
		}
	}
	r.found[ev.ID] = rs
	return true
}

// racingText words a racing selection (seq: where it is stored; rest:
// the turn's events after it, which say what became of it).
func racingText(e events.SessionModelSelected, seq uint64, r racingSelection, rest []events.Event) string {
	sel, fate := e.Model.String(), switchFate(rest, "not taken")
	if r.before {
		return fmt.Sprintf("the user selected %s (seq %d) after this turn's start was decided (on seq %d): the turn started on the model before it; %s (rule revision 5)", sel, seq, r.basis, fate)
	}
	if r.other != "" {
		return fmt.Sprintf("the user selected %s while the turn ran (seq %d), marking turn %s, the session's latest started: %s (rule revision 5: every running turn of the session takes it)", sel, seq, r.other, fate)
	}
	return fmt.Sprintf("the user selected %s while the turn ran (seq %d), decided on a state without this turn, so no switch was marked: %s (rule revision 5)", sel, seq, fate)
}
