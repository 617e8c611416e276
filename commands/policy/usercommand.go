package policy

import "github.com/fledger/fledger/events"

// User session commands and the turns they follow (rule revision 3; issue
// 23: "A turn never writes a pin or selection that a later user command
// replaced"). Which came first is the stream's order, so both sides are
// stream sequences, set by the callers that fold stored events (the
// engine's state and Fold, [World.FoldEvent]) with [NoteSeq]: the
// sequence of the commit that started a turn (TurnState.StartSeq) and of
// the last user command stored for a session (SessionState.UserCommandSeq).

// UserCommand reports whether p is a user's session command: a model
// selection (`/model`, the picker, sessions.patch, any source), a
// `/model default` clear, a `/new` or `/reset`, a user pin
// (`/model …@profile`). What turns write (auto pins and unpins, the
// auto-override recovery's clear, notice state) and compactions are not.
func UserCommand(p events.Payload) bool {
	switch e := p.(type) {
	case events.SessionModelSelected, events.SessionReset:
		return true
	case events.SessionModelCleared:
		return e.Cause != "auto_recovered"
	case events.SessionAuthPinned:
		return PinSource(e.Source) == PinUser
	}
	return false
}

// NoteSeq records the stream sequence seq of a stored event p, and the
// basis of its commit, on the states it concerns: a TurnStarted's (and
// its basis), a LiveSwitchMarked's or a live_switch record's on its turn
// (t), a user command's on its session (s), a user selection's and the
// profile the same command pinned on its session too. Either state may
// be nil.
func NoteSeq(t *TurnState, s *SessionState, p events.Payload, seq, basis uint64) {
	if t != nil {
		switch e := p.(type) {
		case events.TurnStarted:
			t.StartSeq, t.StartBasis = seq, decidedOn(seq, basis)
		case events.LiveSwitchMarked:
			t.MarkSeq = seq
		case events.FallbackStepped:
			if e.Decision == DecisionLiveSwitch {
				t.SwitchSeenSeq = seq
				if e.FallbackStepFinalOutcome == StepNextFallback {
					t.SwitchedBasis = decidedOn(seq, basis)
				}
			}
		}
	}
	if s != nil {
		switch e := p.(type) {
		case events.SessionModelSelected:
			if SelectionSource(e.Source) == SourceUser {
				s.SelectSeq, s.SelectProfile = seq, ""
			}
		case events.SessionAuthPinned:
			if PinSource(e.Source) == PinUser && seq == s.SelectSeq {
				s.SelectProfile = e.ProfileID
			}
		}
	}
	if UserCommand(p) && s != nil {
		s.UserCommandSeq = seq
		if _, sel := p.(events.SessionModelSelected); !sel {
			s.OtherCommandSeq = seq
		}
	}
}

// decidedOn is the basis of a commit at seq recorded with basis: a
// commit stored without one (0: an earlier build, a writer of its own) is
// read as decided on the sequence before it, as replay's verify reads it.
func decidedOn(seq, basis uint64) uint64 {
	if basis == 0 && seq > 0 {
		return seq - 1
	}
	return basis
}

// commandedSince reports whether a user session command was stored for
// the turn's session after the turn started (both sequences known), other
// than the selection whose live switch the turn took (the model it runs
// for from then on is that selection). A command that is not a selection
// (`/new`, `/reset`, `/model default`, a user pin) counts even when a
// selection the turn took came after it.
func (d *decider) commandedSince() bool {
	if d.st.StartSeq == 0 {
		return false
	}
	taken := d.st.SwitchedSeq
	if d.v5() {
		// A switch the turn derived (no mark: SwitchedSeq stays the last
		// mark's) was decided on a state holding the selection it took:
		// every command up to that decision's basis was seen.
		taken = max(taken, d.st.SwitchedBasis)
	}
	return d.session.OtherCommandSeq > d.st.StartSeq || d.session.UserCommandSeq > max(d.st.StartSeq, taken)
}

// noticeSelected is the selected model a fallback notice names when the
// turn answered on answered while running for selected (rule revision 3).
// Once a user session command was stored after the turn started it is the
// session's selection as it is now: its stored model, else the model a
// turn runs without one (the requested model of a turn started on none,
// else the default primary a `/model default` marked, else the configured
// default primary). A selection the user cleared is never named, and an
// answer on the current selection is no fallback. An answer on the run's
// own model with nothing failed (it stood while the user changed the
// selection) is no fallback either.
func (d *decider) noticeSelected(selected, answered ModelRef) ModelRef {
	if !d.v3() || d.st.StartSeq == 0 || d.session.UserCommandSeq <= d.st.StartSeq {
		return d.autoOrigin(selected)
	}
	if answered == selected && len(d.st.Summary) == 0 && len(d.st.PassSummary) == 0 {
		return selected
	}
	switch {
	case d.session.Model != (ModelRef{}):
		return d.session.Model
	case SelectionSource(d.st.SelectionSource) == SourceDefault || SelectionSource(d.st.SelectionSource) == SourceAgent:
		return d.st.Requested
	case d.st.LastMark != (ModelRef{}):
		return d.st.LastMark
	}
	return d.cfg.Defaults.Primary
}

// autoOrigin is the notice's selected model of a turn that ran on the
// session's stored auto override (revision 6): the configured model the
// override fell back from (its origin), which every probe of it tries
// first, so the override's own turns and its probes read as one state,
// and the origin's recovery as the fallback cleared. It is so once the
// notice state names the origin or the turn itself failed over: an
// override whose fallback was never announced (imported session state)
// is not announced by a turn that had nothing to fall back from.
func (d *decider) autoOrigin(selected ModelRef) ModelRef {
	sess := d.session
	if !d.v6() || sess.Source != SourceAuto || sess.Origin == (ModelRef{}) || selected != sess.Model {
		return selected
	}
	if sess.Notice.Selected == sess.Origin.String() || len(d.st.Summary) > 0 || len(d.st.PassSummary) > 0 {
		return sess.Origin
	}
	return selected
}

// originOnOverride: a turn that ran on the session's stored auto override
// without probing its origin, and answered on the origin by falling back
// to it (revision 6). The override stays stored (only a probe the origin
// answers clears it), so the next turns run on it again: the notice
// state is left as it is, not announced as cleared for one turn.
func (d *decider) originOnOverride(selected, answered ModelRef) bool {
	sess := d.session
	return d.v6() && sess.Source == SourceAuto && sess.Origin != (ModelRef{}) && selected == sess.Model && answered == sess.Origin
}
