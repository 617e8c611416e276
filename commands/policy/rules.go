package policy

import (
	"errors"
	"fmt"
)

// Rules is the revision of the decision rules a turn is decided by,
// recorded in TurnStarted.Rules. History is forever: replay --verify
// re-decides every stored turn and compares payload by payload, so a rule
// that changes a decision is a new revision, and a turn keeps the revision
// it started with for every decision it takes, including what it reads of
// other turns (probe slots, skip marks). docs/policy.md "Rule revisions"
// lists what each revision changed.
type Rules int

// Rule revisions.
const (
	// RulesV1 is every build before issue 22 (TurnStarted without rules).
	RulesV1 Rules = 1
	// RulesV2 (issue 22): the primary's cooldown probe uses its provider's
	// probe slot; the skip cache is keyed by the profile that failed;
	// inline API keys are not probed during a disable window; a format
	// error stops the turn (failover.formatAdvances: true advances); a
	// final unclassified error stops like a final unknown one; exhaustion
	// summaries keep each provider message on one line.
	RulesV2 Rules = 2
	// RulesV3 (issue 23): a user model selection that arrives while the
	// turn runs marks a pending live switch the turn takes at its next
	// step (a later candidate is called next, a model outside the chain
	// hands the turn back: TurnSwitched), and the turn writes no auto pin
	// once a user selection replaced the one it ran on; a transport
	// failure after a settled tool batch, before any output, is continued
	// on the same call up to twice (transport_recovery), outside profile
	// health.
	RulesV3 Rules = 3
	// RulesV4: a user pin (`/model …@profile`) of a profile that an
	// explicit order (the stored override or auth.order) does not list
	// is tried first while it is eligible, as OpenClaw's fallback runner
	// prepends an eligible userLockedAuthProfileId (reference §5, §7 step
	// 3; seed 000: a valid user pin "remains the first preference when
	// eligible"). Before, only a listed profile moved to the front, and
	// such a pin was stored but never tried.
	RulesV4 Rules = 4
	// RulesV5: a user model selection stored after the turn's start was
	// decided (the start's basis) is a pending live switch of the turn
	// even when no LiveSwitchMarked names it: a `/model` decided on a
	// state that did not hold the turn yet (the turn's start appended
	// under the turn's subject, the selection under the session's, at
	// once, on one instance or two) marked nothing, and a start decided
	// on a state without the selection started on the model before it;
	// either way the turn ran on as if the user had said nothing. The
	// turn now derives the switch from the session at its next step
	// (deriveSwitch), as the mark it would have had, and takes it once.
	RulesV5 Rules = 5
	// RulesV6: while a session holds a stored auto override (source auto,
	// with the configured model it fell back from, its origin), the
	// fallback notice's selected model is that origin on every turn, not
	// only on the turns that probe it: the override's own turns answered
	// on its model read as the fallback cleared, the next probe as a new
	// fallback, so the notices flapped every probe interval, and the
	// origin's recovery was never announced (seed 000 "User-visible
	// fallback notices": once per state change; "When a later probe
	// succeeds and the session returns to the selected primary").
	RulesV6 Rules = 6
	// CurrentRules is the revision the engine starts new turns with.
	CurrentRules = RulesV6
)

// ErrRulesTooNew is returned for a turn recorded with a rule revision
// this build does not know (written by a newer build).
var ErrRulesTooNew = errors.New("policy: rule revision newer than this build's")

// RulesOf is the revision a recorded TurnStarted.Rules names: absent (0)
// is [RulesV1].
func RulesOf(recorded int) Rules {
	if recorded < int(RulesV1) {
		return RulesV1
	}
	return Rules(recorded)
}

// recorded is the TurnStarted.Rules value of r: 0 (absent) for RulesV1,
// so a revision-1 turn is stored as every earlier build stored it.
func (r Rules) recorded() int {
	if r <= RulesV1 {
		return 0
	}
	return int(r)
}

// check refuses a revision above [CurrentRules].
func (r Rules) check() error {
	if r > CurrentRules {
		return fmt.Errorf("%w: revision %d, this build decides up to %d", ErrRulesTooNew, r, CurrentRules)
	}
	return nil
}

// rules is the revision of the turn being decided.
func (d *decider) rules() Rules { return RulesOf(d.st.Rules) }

// v2 reports whether the turn is decided by revision 2 or later.
func (d *decider) v2() bool { return d.rules() >= RulesV2 }

// v3 reports whether the turn is decided by revision 3 or later.
func (d *decider) v3() bool { return d.rules() >= RulesV3 }

// v4 reports whether the turn is decided by revision 4 or later.
func (d *decider) v4() bool { return d.rules() >= RulesV4 }

// v5 reports whether the turn is decided by revision 5 or later.
func (d *decider) v5() bool { return d.rules() >= RulesV5 }

// v6 reports whether the turn is decided by revision 6 or later.
func (d *decider) v6() bool { return d.rules() >= RulesV6 }

// skipMarks is the skip cache the turn's revision reads: revision 1 a
// failure marked under every profile of its provider, revision 2 under
// the profile that failed only.
func (d *decider) skipMarks() map[string]SkipMark {
	if d.v2() {
		return d.env.ProfileSkipMarks
	}
	return d.env.SkipMarks
}

// inSkipCache reports whether mark is in the deciding engine's skip
// cache: from revision 2 the cache is process-local (seed 000: "The cache
// is process-local and clears on Gateway restart"), so a mark set before
// the engine that started the turn began is not (TurnStarted.
// SkipCacheSince); revision 1 read every mark on the ledger.
func (d *decider) inSkipCache(m SkipMark) bool {
	return !d.v2() || m.At >= d.st.SkipCacheSince
}

// probeProfile is the profile a cooldown probe of a candidate with this
// profile order uses: the first of the order. From revision 2 a
// configured inline API key in an active disable window is passed over
// (seed 000 "Billing disables": "Configured inline API keys cannot retry
// during an active disable window … Stored auth profiles can also recover
// through bounded primary-provider probes"); "" when no profile may be
// probed.
func (d *decider) probeProfile(order []string) string {
	if !d.v2() {
		return order[0]
	}
	for _, id := range order {
		if p, ok := d.cfg.Profile(id); !ok || !p.InlineKey || d.state(p).DisabledUntil <= d.now() {
			return id
		}
	}
	return ""
}

// terminal reports whether a failover failure ends the turn, its error
// surfaced as it is (TurnStopped, disposition failover, the reason): a
// final unknown error (no next candidate) by every revision; from
// revision 2 also a final unclassified error (seed 000 "Does not continue
// on": "a final unknown error when there are no candidates left";
// reference §7 step 7.7 throws the raw error), and a format error unless
// failover.formatAdvances (seed 003: format and invalid-request errors
// "are usually terminal" and do not advance; OpenClaw 2026.9.6 advances,
// reference §12).
func (d *decider) terminal(reason string, later bool) bool {
	switch {
	case reason == ReasonUnknown:
		return !later
	case !d.v2():
		return false
	case reason == ReasonUnclassified:
		return !later
	case reason == ReasonFormat:
		return !d.cfg.FormatAdvances
	}
	return false
}

// surfaced is the provider error a terminal failure shows the user:
// revision 1 its message preview; from revision 2 as an exhaustion
// summary names it, the message preview, else the body preview, else the
// reason in words, so an error that has only a body is not shown empty.
func (d *decider) surfaced(out Outcome) string {
	if !d.v2() {
		return out.Error.MessagePreview
	}
	if out.Error.MessagePreview != "" {
		return out.Error.MessagePreview
	}
	if out.Error.BodyPreview != "" {
		return out.Error.BodyPreview
	}
	return humanReason(out.Reason)
}
