package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
	"github.com/fledger/fledger/projections"
)

// ErrTurnNotFound is returned by [Explain] when no TurnStarted has the id;
// ErrAmbiguousTurn when several agents have a turn with it (name one);
// ErrSessionNotFound by [ExplainTimeline] when no event is of the session.
// Each comes as a [*LookupError] that says which agents there are.
var (
	ErrTurnNotFound    = errors.New("replay: turn not found")
	ErrAmbiguousTurn   = errors.New("replay: several agents have a turn with this id")
	ErrSessionNotFound = errors.New("replay: session not found")
)

// LookupError is a turn or session that [Explain] or [ExplainTimeline]
// could not pick: Kind is one of the Err* values above, ID the turn or
// session asked for, Agent the --agent given ("" = any), and Agents the
// agents that have the turn (ErrAmbiguousTurn) or every agent of the
// stream (not found), sorted.
type LookupError struct {
	Kind   error
	ID     string
	Agent  string
	Agents []string
}

func (e *LookupError) Error() string {
	return fmt.Sprintf("%v: %q (agents: %s)", e.Kind, e.ID, strings.Join(e.Agents, ", "))
}

// Unwrap makes errors.Is(err, ErrTurnNotFound) and the like hold.
func (e *LookupError) Unwrap() error { return e.Kind }

// agentSet collects agent ids; sorted lists them.
type agentSet map[string]bool

func (s agentSet) add(a string) {
	if a != "" {
		s[a] = true
	}
}

func (s agentSet) sorted() []string {
	out := make([]string, 0, len(s))
	for a := range s {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// TimeLayout is how explanations (and the timeline) print times: RFC
// 3339, UTC, milliseconds.
const TimeLayout = projections.TimeLayout

// Explanation is one turn in plain words, built from its events alone (no
// projection), so it holds at any point of the stream. Every time is UTC;
// Offset fields are relative to the turn's start.
type Explanation struct {
	Agent   string `json:"agent"`
	TurnID  string `json:"turn_id"`
	Session string `json:"session"`
	Chat    string `json:"chat"`
	// StartedAt is the turn's start; ConfigHash the config it ran under.
	StartedAt  time.Time `json:"started_at"`
	ConfigHash string    `json:"config_hash"`
	// Requested is the model the turn started from and SelectionSource
	// why (default | agent | user | legacy | auto | cron); Why says it in
	// words, with what that source means for the chain.
	Requested       string       `json:"requested"`
	SelectionSource string       `json:"selection_source"`
	Strict          bool         `json:"strict"`
	AutoOriginProbe bool         `json:"auto_origin_probe,omitempty"`
	Why             string       `json:"why"`
	Chain           []ChainEntry `json:"chain"`
	AttemptLimit    int          `json:"attempt_limit"`
	PinnedProfile   string       `json:"pinned_profile,omitempty"`
	PinSource       string       `json:"pin_source,omitempty"`
	// Seed is TurnStarted.seed, written as a decimal string (a JSON
	// number above 2^53 is rounded by JavaScript and jq).
	Seed uint64 `json:"seed,string"`
	// Steps are the turn's events in words, in stream order.
	Steps []Step `json:"steps"`
	// Notices are the user-visible notices (Delivered false = recorded,
	// not shown in a group or channel chat).
	Notices []NoticeRecord `json:"notices"`
	// Outcome is succeeded | exhausted | stopped | unfinished; End says it
	// in words; Attempts and DurationMs are from the closing event.
	Outcome    string `json:"outcome"`
	End        string `json:"end"`
	Attempts   int    `json:"attempts"`
	DurationMs int64  `json:"duration_ms"`
	// AnsweredBy and Profile name who answered (succeeded only).
	AnsweredBy string `json:"answered_by,omitempty"`
	Profile    string `json:"profile,omitempty"`

	failures   int              // AttemptFailed events seen
	recoveries int              // transport_recovery attempts seen
	rules      int              // TurnStarted.rules as recorded
	rest       []events.Event   // the turn's events after the one described
	ctx        turnContext      // what the stream says before the turn
	cfg        *policy.Config   // the config the turn ran under (nil: not known)
	probes     map[string]int64 // the turn's own primary probes: provider → StartedAt
}

// ChainEntry is one candidate of the chain with its route origin
// (requested | configured-fallback | configured-primary) as recorded;
// Label, when set, says it better ([LabelCronFallback]: a cron payload's
// own fallback, recorded as configured-fallback).
type ChainEntry struct {
	Position    int    `json:"position"`
	Model       string `json:"model"`
	RouteOrigin string `json:"route_origin"`
	Label       string `json:"label,omitempty"`
}

// Step is one event of the turn in words. Details are further lines
// (error text, evidence, why); Event is the recorded payload.
type Step struct {
	Seq     uint64          `json:"seq"`
	Index   int             `json:"index"`
	At      time.Time       `json:"at"`
	Offset  string          `json:"offset"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Details []string        `json:"details,omitempty"`
	Event   json.RawMessage `json:"event"`
}

// NoticeRecord is a notice as the user saw it (or would have).
type NoticeRecord struct {
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	Delivered bool   `json:"delivered"`
}

// Explain reads the stream up to its end and explains turn turnID of
// agent ("" = whichever agent has it; [ErrAmbiguousTurn] when several
// do). It returns [ErrTurnNotFound] when no TurnStarted has the id.
func Explain(ctx context.Context, src Source, agent, turnID string) (*Explanation, error) {
	byAgent := map[string][]events.Event{}
	f := &explainFold{configs: map[string]json.RawMessage{}, profiles: map[string]policy.ProfileState{}, before: map[string]policy.ProfileState{}}
	probes := newProbeFold()
	all := agentSet{}
	marks := map[string]bool{}
	open := map[string]string{} // agent → the session of its running turn turnID
	race := newRacingSelections(turnID)
	err := walk(ctx, src, 1, 0, func(c *commit) error {
		defaultMarks(c, marks)
		for _, ev := range c.Events {
			all.add(ev.Agent)
			if agent != "" && ev.Agent != agent {
				continue
			}
			mine := (ev.Aggregate == events.AggTurn && ev.Key == turnID) || ev.CorrelationID == turnID
			f.fold(&ev, mine)
			probes.fold(&ev, mine)
			if sel, ok := race.atStart(&ev); ok && mine {
				byAgent[ev.Agent] = append(byAgent[ev.Agent], sel)
			}
			if racing := race.during(c, open, &ev); mine || duringTurn(open, &ev) || racing {
				byAgent[ev.Agent] = append(byAgent[ev.Agent], ev)
			}
			if mine {
				openTurn(open, &ev)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var agents []string
	for a, evs := range byAgent {
		for _, ev := range evs {
			if _, ok := ev.Data.(events.TurnStarted); ok {
				agents = append(agents, a)
				break
			}
		}
	}
	sort.Strings(agents)
	switch len(agents) {
	case 0:
		return nil, &LookupError{Kind: ErrTurnNotFound, ID: turnID, Agent: agent, Agents: all.sorted()}
	case 1:
		tc := turnContext{before: f.before, probeAt: probes.snaps[agents[0]+"\x00"+turnID], configs: f.configs, defaultMarks: marks, racing: race.found}
		x := explainWith(agents[0], turnID, byAgent[agents[0]], tc)
		x.strictAgentWhy(f.configs[agents[0]+"\x00"+x.ConfigHash])
		return x, nil
	}
	return nil, &LookupError{Kind: ErrAmbiguousTurn, ID: turnID, Agents: agents}
}

// explainFold is what Explain folds from every event before the turn's
// (the policy's one dispatch, policy.FoldEvent): each agent's configs and
// profiles' usageStats, and for the turn's own profile events the state
// of the profile just before each, so a success says what it kept.
type explainFold struct {
	policy.Ignore
	agent    string                         // of the event being folded
	id       string                         // of the event being folded, when it is the turn's
	configs  map[string]json.RawMessage     // agent + "\x00" + hash → canonical config
	profiles map[string]policy.ProfileState // agent + "\x00" + profile id → folded usageStats
	before   map[string]policy.ProfileState // event id → its profile's state just before it
}

// fold folds ev; mine says it is one of the explained turn's.
func (f *explainFold) fold(ev *events.Event, mine bool) {
	f.agent, f.id = ev.Agent, ""
	if mine {
		f.id = ev.ID
	}
	policy.FoldEvent(f, ev)
}

// FoldConfig keeps a ConfigApplied's canonical config.
func (f *explainFold) FoldConfig(_ string, p events.Payload) {
	if ca, ok := p.(events.ConfigApplied); ok {
		f.configs[f.agent+"\x00"+ca.Hash] = ca.Config
	}
}

// FoldProfile folds a profile event with policy.EvolveProfile.
func (f *explainFold) FoldProfile(key string, p events.Payload) {
	k := f.agent + "\x00" + key
	if f.id != "" {
		f.before[f.id] = f.profiles[k]
	}
	f.profiles[k] = policy.EvolveProfile(f.profiles[k], p)
}

// explainWith builds the explanation from the turn's events (those of its
// aggregate and those correlated with it), in stream order, with what the
// stream says before the turn (tc): so a success says what it kept, a
// skipped primary why it was not probed, a cron chain whose fallbacks are
// the payload's.
func explainWith(agent, turnID string, evs []events.Event, tc turnContext) *Explanation {
	x := &Explanation{Agent: agent, TurnID: turnID, Outcome: "unfinished", Notices: []NoticeRecord{}, ctx: tc, probes: map[string]int64{}}
	var start int64
	for _, ev := range evs {
		if ts, ok := ev.Data.(events.TurnStarted); ok {
			start = ts.StartedAt
		}
	}
	x.StartedAt = events.FromMillis(start)
	for k, ev := range evs {
		raw, _, _ := canonical(ev.Data)
		st := Step{Seq: ev.Seq, Index: ev.Index, At: ev.At, Offset: offset(events.Millis(ev.At), start), Type: ev.Type, Event: raw}
		x.rest = evs[k+1:]
		x.describe(&st, ev, start)
		if st.Text != "" {
			x.Steps = append(x.Steps, st)
		}
	}
	if x.Steps == nil {
		x.Steps = []Step{}
	}
	return x
}

// why says why the chain looked as it did (seed 000 "Selection source
// policy", "Candidate chain rules"); payload says a cron chain was built
// from the payload's own fallbacks.
func why(e events.TurnStarted, payload bool) string {
	var s string
	switch e.SelectionSource {
	case string(policy.SourceDefault):
		s = "no model is stored on the session, so the turn requests the configured default primary (agents.defaults.model.primary); the chain adds agents.defaults.model.fallbacks in order, then the primary, without duplicates"
	case string(policy.SourceAgent):
		s = "the agent's own primary (agents.entries.<id>.model) is requested; it is strict unless the agent's model object lists its own fallbacks"
	case string(policy.SourceUser):
		s = "the session holds a user selection (/model): a user's choice is strict, so no other model is tried"
	case string(policy.SourceLegacy):
		s = "the session holds a model with no recorded source (legacy override), treated as a user selection: strict"
	case string(policy.SourceAuto):
		s = "the session holds an automatic override (an imported fallback); it uses the configured fallback chain"
		if e.AutoOriginProbe {
			s += ", and this turn first probes the override's origin " + e.Requested.String() + " (every 5 minutes)"
		}
	case string(policy.SourceCron):
		s = "a cron job's payload model is a job primary, not a user override: it keeps the configured fallbacks unless the payload lists its own"
		switch {
		case payload && e.Strict:
			s += "; this payload's fallbacks are empty (payload.fallbacks: []): a strict cron run"
		case payload:
			s += "; this payload lists its own (payload.fallbacks): the chain is the cron model then those, with no configured primary appended"
		}
	default:
		s = "selection source " + e.SelectionSource
	}
	if e.FallbacksOverride {
		// Seed 000 "Candidate chain rules": the caller's list replaces what
		// the selection source would have used.
		s = "the requested model is " + e.Requested.String() + " (source " + e.SelectionSource + "), and the caller supplied the turn's fallbacks (fallbacks_override): the chain is that model then exactly those, with no configured primary appended"
		if e.Strict {
			s += "; the list is empty, so the turn is strict"
		}
	}
	if e.Strict {
		s += ". The chain is this model alone"
	}
	if e.PinnedProfile != "" {
		s += fmt.Sprintf(". The session's %s pin %s is tried first on its provider", e.PinSource, e.PinnedProfile)
	}
	return s + "."
}

func attemptWhy(e events.AttemptStarted) string {
	switch policy.AttemptKind(e.Kind) {
	case policy.KindFirst:
		return "the requested model, with the first usable profile of the order"
	case policy.KindRetry:
		return "the same model and profile again after the back-off (transient error)"
	case policy.KindRotation:
		return "another profile of the same provider (rotation before model fallback)"
	case policy.KindFallback:
		return fmt.Sprintf("the next candidate of the chain (position %d)", e.CandidateIndex+1)
	case policy.KindProbe:
		switch {
		case e.ProbeSlot && e.CandidateIndex == 0:
			// Rule revision 2: the primary's probe is its provider's one
			// probe of the run.
			return "a cooldown probe of the primary, using its provider's one probe of this run (no same-provider sibling is probed after it)"
		case e.ProbeSlot:
			return "a cooldown probe using the provider's transient probe slot"
		}
		return "a cooldown probe of the primary"
	case policy.KindChainRetry:
		return fmt.Sprintf("whole-chain overload retry, round %d", e.Round)
	case policy.KindLiveSwitch:
		return fmt.Sprintf("the candidate the user selected during the run (position %d): a live switch jumps straight there, no candidate in between tried", e.CandidateIndex+1)
	case policy.KindTransportRecovery:
		return "the same call continued from the transcript after a transport failure that followed a settled tool batch, before any output (tools not rerun; at most twice a turn; not counted against the profile)"
	}
	return e.Kind
}

// offset renders ms relative to start as "+1.5s" ("-" for 0).
func offset(ms, start int64) string {
	if ms == 0 {
		return "-"
	}
	d := time.Duration(ms-start) * time.Millisecond
	if d < 0 {
		return "-" + d.Abs().String()
	}
	return "+" + d.String()
}

func atProfile(p string) string {
	if p == "" {
		return ""
	}
	return " @" + p
}

func httpStatus(s int) string {
	if s == 0 {
		return ""
	}
	return fmt.Sprintf(" (HTTP %d)", s)
}

func msDur(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// oneLine flattens provider text to one line of at most n runes. It
// redacts again: events written before a redaction rule existed keep what
// that older redactor missed, and redacting is idempotent.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
