package policy

import (
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
)

// model_fallback_decision decisions (reference §8).
const (
	DecisionCandidateFailed    = "candidate_failed"
	DecisionSkipCandidate      = "skip_candidate"
	DecisionProbeCandidate     = "probe_cooldown_candidate"
	DecisionCandidateSucceeded = "candidate_succeeded"
	// DecisionLiveSwitch records a pending live switch taken (rule
	// revision 3; not one of OpenClaw's four decisions, which logs the
	// jump as a LiveSessionModelSwitchError with reason unknown).
	DecisionLiveSwitch = "live_switch"
)

// Decisions lists every model_fallback_decision decision, in the order
// of the record's schema enum (events.FallbackStepped.Decision).
var Decisions = []string{DecisionCandidateFailed, DecisionSkipCandidate, DecisionProbeCandidate,
	DecisionCandidateSucceeded, DecisionLiveSwitch}

// fallbackStepFinalOutcome values.
const (
	StepNextFallback   = "next_fallback"
	StepChainExhausted = "chain_exhausted"
	StepSucceeded      = "succeeded"
	// StepContinue: a live switch to the current or an earlier candidate
	// is recorded and the run continues as it would have.
	StepContinue = "continue"
	// StepSwitched: the failed candidate's run ended there, handed back
	// to a model outside the chain by a live switch (no next candidate;
	// rule revision 3).
	StepSwitched = "switched"
)

// NextKind is what the engine does after a decision ([Next.Kind]).
type NextKind string

// Next kinds.
const (
	// NextCall: call Next.Call's provider/model with its profile, then
	// report the outcome with [OnOutcome].
	NextCall NextKind = "call"
	// NextWait: wait until Next.ResumeAt (Next.WaitMs from now), then call
	// [Resume].
	NextWait NextKind = "wait"
	// NextDone: the turn answered (Next.AnsweredBy, Next.ProfileID).
	NextDone NextKind = "done"
	// NextExhausted: every candidate failed (Next.Summary, Next.Attempts,
	// Next.SoonestCooldownExpiry).
	NextExhausted NextKind = "exhausted"
	// NextStop: the turn stopped without exhausting the chain
	// (Next.Disposition, Next.Reason).
	NextStop NextKind = "stop"
	// NextSwitch: a live switch selected a model outside the chain; run
	// the same turn again on Next.SwitchTo (with Next.ProfileID when the
	// selection pinned one), as a new turn (rule revision 3).
	NextSwitch NextKind = "switch"
)

// Call is one provider call to make.
type Call struct {
	Provider string
	Model    string
	// ProfileID is the auth profile to use ("" when the provider has no
	// configured profiles).
	ProfileID string
	// Attempt is the 1-based attempt number across the turn.
	Attempt int
	// CandidateIndex is the 0-based chain position.
	CandidateIndex int
	// Kind: first | retry | rotation | fallback | probe | chain_retry.
	Kind AttemptKind
	// Round is the whole-chain overload retry round (0 = first pass).
	Round int
}

// Notice is a user-visible operational notice the engine delivers when
// Delivered (never in group or channel chats).
type Notice struct {
	Kind      NoticeKind
	Text      string
	Delivered bool
}

// Next is the action a turn decision asks of the engine. Exactly the fields
// of its Kind are set; Notices may accompany any kind.
type Next struct {
	Kind NextKind
	// Call is set for NextCall.
	Call *Call
	// WaitMs and ResumeAt (Unix ms) are set for NextWait.
	WaitMs   int64
	ResumeAt int64
	// AnsweredBy and ProfileID are set for NextDone.
	AnsweredBy ModelRef
	ProfileID  string
	// Summary, Attempts and SoonestCooldownExpiry (Unix ms, 0 = unknown) are
	// set for NextExhausted. Summary is `All models failed (N): p/m: err
	// (reason) | …` when N ≥ 2; with a single attempt it is that attempt's
	// own redacted error text and RawError is true (reference §7: with at
	// most one attempt the last error is rethrown as is), so a gateway
	// surfaces the provider's error; Attempts[0] then carries its reason,
	// status and code. TurnExhausted.Summary always holds the structured
	// summary.
	Summary               string
	RawError              bool
	Attempts              []events.ExhaustedAttempt
	SoonestCooldownExpiry int64
	// SwitchTo is set for NextSwitch (with ProfileID and Message).
	SwitchTo ModelRef
	// Disposition, Reason and Message are set for NextStop.
	Disposition string
	Reason      string
	Message     string
	// Notices to show now.
	Notices []Notice
}

// Decision is a turn decider's output: the events to append atomically (turn,
// profile and session payloads; the engine wraps each in an envelope for its
// aggregate) and the next action.
type Decision struct {
	Events []events.Payload
	Next   Next
}

// SkipMark is an auth skip-cache marker: when a non-primary candidate
// failed with Reason auth or auth_permanent (Unix ms).
type SkipMark struct {
	At     int64  `json:",omitzero"`
	Reason string `json:",omitzero"`
}

// SkipKey is the skip-cache key (session, provider, model, auth scope =
// user-pinned profile or the first profile id) (reference §7 step 4; seed
// 000 "Auth failure skip cache": "The key includes the session, provider,
// model, and selected automatic or explicit profile ID").
func SkipKey(session, provider, model, profile string) string {
	return session + "\x00" + provider + "\x00" + model + "\x00" + profile
}

// Env is everything a turn decision reads besides the turn state. The
// engine loads it before each decision; the decider never mutates it.
type Env struct {
	// Config is the config in force (the one TurnStarted.ConfigHash names).
	Config *Config
	// Profiles holds the usageStats by profile id (missing = never used).
	Profiles map[string]ProfileState
	// StoredOrder is the per-agent stored order override by provider.
	StoredOrder map[string][]string
	// ProbeAt is the last primary cooldown probe per provider (Unix ms),
	// from AttemptStarted{Kind: probe, CandidateIndex: 0} of earlier turns.
	ProbeAt map[string]int64
	// SkipMarks holds auth skip-cache markers by [SkipKey], from
	// AttemptFailed{auth|auth_permanent} of non-primary candidates of the
	// session, each written under every profile of the provider and none:
	// what rule revision 1 reads. Ignored while the skip cache is off.
	SkipMarks map[string]SkipMark
	// ProfileSkipMarks holds the same markers under the profile that
	// failed only ("" when the provider has no profiles): what revision 2
	// reads, so switching profiles does not inherit another profile's
	// marker (seed 000 "Auth failure skip cache").
	ProfileSkipMarks map[string]SkipMark
	// Session is the session's current state (pin, notice state, stored
	// selection).
	Session SessionState
	// Now is the decision time, Unix ms.
	Now int64
}

// Outcome is one attempt's result as the engine reports it: the
// classification of commands/classify as plain values.
type Outcome struct {
	// OK is true when the call answered; the other fields but LatencyMs are
	// then ignored.
	OK bool
	// Reason is one of the 16 reason names; Status the visible HTTP status
	// (0 = none); Code the provider/SDK code.
	Reason string
	Status int
	Code   string
	// Disposition: failover | compaction | abort | refusal | coordination;
	// "" = [DefaultDisposition].
	Disposition string
	// RetryAfterMs is the provider's retry-after hint (0 = none).
	RetryAfterMs int64
	// Reset is when the provider said its usage window reopens (nil =
	// not said): a rate_limit carrying one blocks the profile until then
	// (block.go), and the time to it counts as the provider's wait.
	Reset *events.ProviderReset
	// LongWindow is the evidence that a rate_limit is a long usage window
	// (daily, weekly, monthly, subscription): no same-model retry
	// (reference §9).
	LongWindow *events.UsageWindow
	// RequestSizeCeiling marks a provider request-size ceiling (TPM limit
	// below the request): never retried on the same profile, another
	// candidate may admit it (POLICY). CeilingTokens is [limit, requested].
	RequestSizeCeiling bool
	CeilingTokens      []int64
	// OutputStarted / ToolStarted: assistant output or a tool call had
	// started; the attempt is not replay-safe.
	OutputStarted bool
	ToolStarted   bool
	// ToolBatchSettled: the call continued the transcript after a settled
	// tool batch (the gateway says so); with a transport failure before
	// any output it qualifies for the bounded transport recovery (rule
	// revision 3).
	ToolBatchSettled bool
	// Error is the redacted provider error; Evidence the classifier's.
	Error    events.ProviderErrorRecord
	Evidence events.Evidence
	// LatencyMs is how long the call took.
	LatencyMs int64
}

// Errors of the turn decider.
var (
	ErrTurnNotRunning = errors.New("policy: no attempt is in flight for this turn")
	ErrTurnNotWaiting = errors.New("policy: the turn is not waiting")
	ErrWaitNotOver    = errors.New("policy: the wait is not over")
	ErrBadReason      = errors.New("policy: unknown failover reason")
	ErrBadChain       = errors.New("policy: empty candidate chain")
	ErrNoConfig       = errors.New("policy: Env.Config is nil")
)

// StartInput names a new turn.
type StartInput struct {
	TurnID  string
	Session string
	// Chat is direct | group | channel.
	Chat string
	// Seed seeds every jitter draw of the turn; the caller draws it and it
	// is recorded in TurnStarted.Seed.
	Seed uint64
	// Rules is the rule revision the turn is decided by, recorded in
	// TurnStarted.Rules: the engine passes [CurrentRules], replay a stored
	// TurnStarted's (0 = [RulesV1], every build before issue 22).
	Rules Rules
	// SkipCacheSince is when the deciding engine's skip cache began (its
	// start on a stream that held commits), recorded in
	// TurnStarted.SkipCacheSince; replay passes the stored one. From
	// revision 2 no skip mark set before it is read.
	SkipCacheSince int64
}

// decider accumulates one decision: it emits events and folds them into its
// [World] as it goes, so what it decides next sees what it decided. The
// session, profiles and stored orders are read from the World; env's are
// only where it started.
type decider struct {
	cfg *Config
	env Env
	World
	out     []events.Payload
	notices []Notice
}

func newDecider(st TurnState, env Env) (*decider, error) {
	if env.Config == nil {
		return nil, ErrNoConfig
	}
	if err := RulesOf(st.Rules).check(); err != nil {
		return nil, err
	}
	d := &decider{cfg: env.Config, env: env, World: NewWorld(st, env), out: make([]events.Payload, 0, 8)}
	d.deriveSwitch()
	return d, nil
}

func (d *decider) emit(p events.Payload) {
	d.out = append(d.out, p)
	d.Fold(p)
}

func (d *decider) done(next Next) Decision {
	next.Notices = d.notices
	return Decision{Events: d.out, Next: next}
}

func (d *decider) now() int64 { return d.env.Now }

func (d *decider) state(p Profile) ProfileState { return d.cfg.stateOf(d.profiles, p) }

// StartTurn opens a turn on sel (seed 000 "Runtime flow"): it clears a pin
// whose profile disappeared, records TurnStarted and walks the chain from
// the requested model to the first callable candidate (skipping or probing
// candidates whose profiles are all unusable). Next is a call, or
// exhausted when every candidate was skipped.
func StartTurn(sel Selection, env Env, in StartInput) (Decision, error) {
	if len(sel.Chain) == 0 {
		return Decision{}, ErrBadChain
	}
	rules := RulesOf(int(in.Rules))
	d, err := newDecider(TurnState{Rules: int(rules), SkipCacheSince: in.SkipCacheSince}, env)
	if err != nil {
		return Decision{}, err
	}
	for _, e := range d.cfg.ReconcilePin(env.Session, in.Session) {
		d.emit(e)
	}
	first := sel.Chain[0]
	d.emit(events.TurnStarted{
		TurnID: in.TurnID, Session: in.Session, Chat: in.Chat, Requested: sel.Requested,
		SelectionSource: string(sel.Source), Strict: sel.Strict, Chain: append([]events.Candidate(nil), sel.Chain...),
		ConfigHash: d.cfg.Hash, AttemptLimit: d.cfg.LoopLimit(len(d.cfg.ProviderProfiles(first.Provider))),
		PinnedProfile: d.session.Pin, PinSource: string(d.session.PinSource), Seed: in.Seed,
		StartedAt: env.Now, AutoOriginProbe: sel.AutoOriginProbe, Rules: rules.recorded(), SkipCacheSince: in.SkipCacheSince,
		FallbacksOverride: sel.FallbacksOverride,
	})
	return d.advance(0, KindFirst), nil
}

// Resume continues a turn after a NextWait, at or after its ResumeAt: a
// scheduled same-model retry starts its call; a whole-chain overload retry
// walks the chain again from the requested model, first sending the
// overload notice once ChainOverloadNoticeAfterMs was waited (seed 003).
func Resume(st TurnState, env Env) (Decision, error) {
	if st.Phase != PhaseWaiting {
		return Decision{}, ErrTurnNotWaiting
	}
	d, err := newDecider(st, env)
	if err != nil {
		return Decision{}, err
	}
	noticeAt, noticeDue := d.overloadNoticeAt()
	noticeDue = noticeDue && env.Now >= noticeAt
	if env.Now < st.ResumeAt {
		if !noticeDue {
			return Decision{}, fmt.Errorf("%w: resume at %d, now %d", ErrWaitNotOver, st.ResumeAt, env.Now)
		}
		// The overload notice falls inside the wait: send it, wait the rest.
		d.notice(NoticeOverloadWait, OverloadNoticeText)
		return d.done(Next{Kind: NextWait, WaitMs: st.ResumeAt - env.Now, ResumeAt: st.ResumeAt}), nil
	}
	// Rule revision 3: a pending live switch is taken at the end of the
	// wait (during a whole-chain wait every candidate is later).
	from := -1
	var failed *Outcome
	if st.Pending == PendingRetry {
		from = st.Current.CandidateIndex
		f := failureOutcome(st.LastFailure)
		failed = &f
	}
	if dec, ok := d.takeSwitch(from, failed, nil); ok {
		return dec, nil
	}
	if st.Pending == PendingRetry {
		c := st.Current
		return d.call(c.CandidateIndex, c.ProfileID, KindRetry, false), nil
	}
	if noticeDue {
		d.notice(NoticeOverloadWait, OverloadNoticeText)
	}
	return d.advance(0, KindChainRetry), nil
}

func (d *decider) notice(kind NoticeKind, text string) {
	n := Notice{Kind: kind, Text: text, Delivered: delivered(d.st.Chat)}
	d.emit(events.NoticeSent{TurnID: d.st.TurnID, Session: d.st.Session, Kind: string(kind), Text: text, Delivered: n.Delivered})
	d.notices = append(d.notices, n)
}

// call starts an attempt on candidate i with profile.
func (d *decider) call(i int, profile string, kind AttemptKind, probeSlot bool) Decision {
	c := d.st.Chain[i]
	a := events.AttemptStarted{TurnID: d.st.TurnID, Attempt: d.st.Attempts + 1, CandidateIndex: i,
		Provider: c.Provider, Model: c.Model, ProfileID: profile, Kind: string(kind), Round: d.st.Round,
		StartedAt: d.now(), ProbeSlot: probeSlot}
	d.emit(a)
	return d.done(Next{Kind: NextCall, Call: &Call{Provider: c.Provider, Model: c.Model, ProfileID: profile,
		Attempt: a.Attempt, CandidateIndex: i, Kind: kind, Round: a.Round}})
}

// order returns the profile order for candidate i, the session pin
// preferred when it is on the candidate's provider.
func (d *decider) order(c events.Candidate) []string {
	pref, locked := "", false
	if d.st.Pin != "" && d.pinProvider() == c.Provider {
		pref, locked = d.st.Pin, d.st.PinSource == string(PinUser)
	}
	// Revision 3: after a live switch the selection's own user pin
	// (`/model p/m@profile` during the run) leads on its provider, the
	// persisted session over the turn's start (seed 000: "Live-session
	// reconciliation prefers persisted session overrides over stale
	// runtime model fields").
	if s := d.session; d.v3() && d.st.Switched.Provider == c.Provider && s.PinSource == PinUser && s.PinProvider == c.Provider {
		pref, locked = s.Pin, true
	}
	return d.cfg.ResolveOrder(OrderInput{Provider: c.Provider, Model: c.Model, StoredOrder: d.orders[c.Provider],
		States: d.profiles, Preferred: pref, Locked: locked && d.v4(), Now: d.now()})
}

func (d *decider) pinProvider() string {
	if p, ok := d.cfg.Profile(d.st.Pin); ok {
		return p.Provider
	}
	return ""
}

func (d *decider) statesOf(ids []string) []ProfileState {
	out := make([]ProfileState, 0, len(ids))
	for _, id := range ids {
		p, _ := d.cfg.Profile(id)
		out = append(out, d.state(p))
	}
	return out
}

// nextIndex is the first candidate after i whose provider is not
// TLS-banned (-1 when none): the "next candidate" of a decision record.
func (d *decider) nextIndex(i int) int {
	for j := i + 1; j < len(d.st.Chain); j++ {
		if !contains(d.st.TLSBanned, d.st.Chain[j].Provider) {
			return j
		}
	}
	return -1
}

// probeOpen reports whether the per-provider probe throttle allows a
// primary probe now (reference §7 step 5: ProbeThrottleMs since the last).
func (d *decider) probeOpen(provider string) bool {
	last := d.env.ProbeAt[provider]
	for _, m := range d.st.Probes {
		if m.Provider == provider {
			last = max(last, m.At)
		}
	}
	return last == 0 || d.now()-last >= d.cfg.ProbeThrottleMs
}

// advance walks the chain from candidate i (seed 000 "Cooldown skip vs
// probe"; reference §7 steps 1–5) and starts the first callable one with
// kind; past the end it ends the pass.
func (d *decider) advance(i int, kind AttemptKind) Decision {
	p := d.cfg.Params
	for start := i; i < len(d.st.Chain); i++ {
		c := d.st.Chain[i]
		if kind == KindFirst && i > 0 || kind == KindLiveSwitch && i > start {
			kind = KindFallback
		}
		if contains(d.st.TLSBanned, c.Provider) {
			d.skip(i, ReasonTLSCertificate, "skip", ProviderIssueSkipText(c.Provider, ReasonTLSCertificate), 0)
			continue
		}
		order := d.order(c)
		if ttl := p.EffectiveSkipCacheTTL(); i > 0 && ttl > 0 {
			scope := ""
			if PinSource(d.st.PinSource) == PinUser && d.pinProvider() == c.Provider {
				scope = d.st.Pin
			} else if len(order) > 0 {
				scope = order[0]
			}
			if m, ok := d.skipMarks()[SkipKey(d.st.Session, c.Provider, c.Model, scope)]; ok && m.At > 0 && d.now()-m.At < ttl && d.inSkipCache(m) {
				d.skip(i, m.Reason, "skip", SkipCacheText(ModelRef{Provider: c.Provider, Model: c.Model}, m.Reason), 0)
				continue
			}
		}
		if len(order) == 0 {
			return d.call(i, "", kind, false)
		}
		first, _ := d.cfg.Profile(order[0])
		if p.Usable(d.state(first), c.Model, d.now()) {
			return d.call(i, order[0], kind, false)
		}
		states := d.statesOf(order)
		reason := p.UnavailableReason(states, c.Model, d.now())
		soonest := p.SoonestExpiry(states, c.Model, d.now())
		primary := i == 0
		// A provider-reported reset window stays authoritative until near
		// its end: a blocked primary is not probed merely for being rate
		// limited (reference §7 step 5), and a fallback sibling whose every
		// profile is blocked does not use the transient probe slot (seed
		// 000: siblings are tried when the failure looks transient).
		resetWindow := resetWindowActive(states, c.Model, d.now())
		with := d.probeProfile(order)
		probe := primary && with != "" && d.probeOpen(c.Provider) &&
			(len(d.st.Chain) == 1 || reason == ReasonRateLimit && !resetWindow || soonest == 0 || d.now() >= soonest-p.NearExpiryMarginMs)
		switch {
		case reason == ReasonAuth || reason == ReasonAuthPermanent:
			d.skip(i, reason, "skip", ProviderIssueSkipText(c.Provider, reason), soonest)
		case primary && probe:
			// Revision 2: the primary's probe uses its provider's probe
			// slot, so a same-provider sibling is not probed again in
			// this run (seed 000: one per provider per fallback run).
			d.probeRecord(i, reason, false)
			return d.call(i, with, KindProbe, d.v2())
		case reason == ReasonBilling || primary || !transientProbe.has(reason) || allBlocked(states, c.Model, d.now()) || with == "":
			d.skip(i, reason, "suspend", CooldownSkipText(c.Provider), soonest)
		case d.slotsUsed(c.Provider) < p.TransientProbesPerProvider:
			d.probeRecord(i, reason, true)
			return d.call(i, with, KindProbe, true)
		default:
			d.skip(i, reason, "skip", ProbeUsedSkipText(c.Provider), soonest)
		}
	}
	return d.endOfPass()
}

func (d *decider) slotsUsed(provider string) int {
	n := 0
	for _, p := range d.st.ProbeSlots {
		if p == provider {
			n++
		}
	}
	return n
}

// record returns the common model_fallback_decision fields for candidate i.
func (d *decider) record(decision string, i int) events.FallbackStepped {
	c, req := d.st.Chain[i], d.st.Chain[0]
	prev := make([]events.PreviousAttempt, 0, len(d.st.Summary))
	for _, a := range d.st.Summary {
		prev = append(prev, events.PreviousAttempt{Provider: a.Provider, Model: a.Model, Reason: a.Reason,
			Status: a.Status, Code: a.Code, ErrorPreview: a.Error})
	}
	if len(prev) == 0 {
		prev = nil
	}
	return events.FallbackStepped{
		TurnID: d.st.TurnID, SessionID: d.st.Session, Decision: decision,
		RequestedProvider: req.Provider, RequestedModel: req.Model,
		CandidateProvider: c.Provider, CandidateModel: c.Model, CandidateRouteOrigin: c.RouteOrigin,
		Attempt: i + 1, Total: len(d.st.Chain), IsPrimary: i == 0,
		RequestedModelMatched: c.Provider == req.Provider && c.Model == req.Model,
		FallbackConfigured:    len(d.st.Chain) > 1, AllowTransientProbe: i > 0,
		ProfileCount: len(d.cfg.ProviderProfiles(c.Provider)), PreviousAttempts: prev,
	}
}

// step fills the fallbackStep* fields of a failed or skipped candidate i.
func (d *decider) step(r *events.FallbackStepped, i int, reason, detail string) {
	c := d.st.Chain[i]
	r.FallbackStepType = "fallback_step"
	r.FallbackStepFromModel = ModelRef{Provider: c.Provider, Model: c.Model}.String()
	r.FallbackStepFromReason, r.FallbackStepFromDetail, r.FallbackStepChainPosition = reason, detail, i+1
	r.FallbackStepFinalOutcome = StepChainExhausted
	if j := d.nextIndex(i); j >= 0 {
		n := d.st.Chain[j]
		r.NextCandidateProvider, r.NextCandidateModel, r.NextCandidateRouteOrigin = n.Provider, n.Model, n.RouteOrigin
		r.FallbackStepToModel = ModelRef{Provider: n.Provider, Model: n.Model}.String()
		r.FallbackStepFinalOutcome = StepNextFallback
	}
	r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (%s) -> %s", r.Decision, r.FallbackStepFromModel, reason, r.FallbackStepFinalOutcome)
	if r.FallbackStepToModel != "" {
		r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (%s) -> %s", r.Decision, r.FallbackStepFromModel, reason, r.FallbackStepToModel)
	}
}

func (d *decider) skip(i int, reason, decision, msg string, soonest int64) {
	c := d.st.Chain[i]
	r := d.record(DecisionSkipCandidate, i)
	r.Reason, r.ErrorPreview = reason, msg
	d.step(&r, i, reason, msg)
	d.emit(events.CandidateSkipped{TurnID: d.st.TurnID, CandidateIndex: i, Provider: c.Provider, Model: c.Model,
		Reason: reason, Decision: decision, Message: msg, SoonestExpiry: soonest})
	d.emit(r)
}

func (d *decider) probeRecord(i int, reason string, slot bool) {
	r := d.record(DecisionProbeCandidate, i)
	r.Reason, r.AllowTransientProbe = reason, slot
	r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s/%s (%s)", r.Decision, r.CandidateProvider, r.CandidateModel, reason)
	d.emit(r)
}

// endOfPass ends a chain pass: a whole-chain overload retry when every
// attempt of the pass failed only with overloaded, nothing was skipped and
// nothing replay-unsafe happened (seed 003), else exhaustion.
func (d *decider) endOfPass() Decision {
	p, st := d.cfg.Params, d.st
	if st.RoundFailures > 0 && st.RoundOnlyOverload && st.RoundSkips == 0 && !st.ReplayUnsafe && st.Round < p.ChainOverloadRounds {
		delay := capExp(p.ChainOverloadBaseMs, p.ChainOverloadMaxMs, st.Round+1)
		d.emit(events.ChainRetryScheduled{TurnID: st.TurnID, Round: st.Round + 1, DelayMs: delay,
			WaitedMs: st.WaitedMs, ResumeAt: d.now() + delay})
		// The overload notice is due the moment ChainOverloadNoticeAfterMs
		// has been waited (seed 003), which may fall inside this wait:
		// the engine then resumes at that moment, gets the notice and
		// waits the rest.
		wake := d.st.ResumeAt
		if at, due := d.overloadNoticeAt(); due {
			if at <= d.now() {
				d.notice(NoticeOverloadWait, OverloadNoticeText)
			} else {
				wake = min(wake, at)
			}
		}
		return d.done(Next{Kind: NextWait, WaitMs: wake - d.now(), ResumeAt: wake})
	}
	var soonest int64
	for _, c := range st.Chain {
		var states []ProfileState
		for _, pr := range d.cfg.ProviderProfiles(c.Provider) {
			states = append(states, d.state(pr))
		}
		if s := p.SoonestExpiry(states, c.Model, d.now()); s > 0 && (soonest == 0 || s < soonest) {
			soonest = s
		}
	}
	attempts := append([]events.ExhaustedAttempt(nil), st.Summary...)
	reason := ReasonUnknown
	if n := len(attempts); n > 0 {
		reason = attempts[n-1].Reason
	}
	summary := ExhaustionSummary(attempts)
	if d.v2() {
		summary = OneLineExhaustionSummary(attempts)
	}
	d.emit(events.TurnExhausted{TurnID: st.TurnID, Summary: summary, Reason: reason, Attempts: attempts,
		SoonestCooldownExpiry: soonest, DurationMs: d.now() - st.StartedAt})
	next := Next{Kind: NextExhausted, Summary: summary, Attempts: attempts, SoonestCooldownExpiry: soonest}
	// Reference §7 "Failure summary": with at most one attempt OpenClaw
	// rethrows the last error as is, so the user sees the provider's own
	// (redacted) error rather than "All models failed (1): …". The event
	// keeps the structured summary.
	if len(attempts) <= 1 {
		next.RawError = true
		if len(attempts) == 1 {
			next.Summary = attempts[0].Error
		}
	}
	return d.done(next)
}

// overloadNoticeAt returns when the whole-chain overload notice is due
// during the current chain wait, and whether it still has to be sent:
// the wait started at ResumeAt − delay with WaitedMs − delay already
// waited, so ChainOverloadNoticeAfterMs is reached at ResumeAt − WaitedMs +
// ChainOverloadNoticeAfterMs.
func (d *decider) overloadNoticeAt() (int64, bool) {
	st := d.st
	if st.Pending != PendingChain || st.OverloadNoticeSent {
		return 0, false
	}
	at := st.ResumeAt - st.WaitedMs + d.cfg.ChainOverloadNoticeAfterMs
	if at > st.ResumeAt {
		return 0, false
	}
	return at, true
}

func validReason(r string) bool {
	return unavailablePriority.has(r) || r == ReasonServerError || r == ReasonTLSCertificate || r == ReasonContextOverflow
}

// OnOutcome decides what follows one attempt's outcome (seed 000 "Runtime
// flow", "Model fallback"; reference §7, §9):
//
//   - success: AttemptSucceeded, ProfileSucceeded, a candidate_succeeded
//     record after earlier failures or a probe, an auto pin, an auto
//     override cleared on recovery, the fallback notice state and notice,
//     TurnSucceeded; Next done;
//   - compaction, abort, refusal, coordination: TurnStopped, no health
//     touched; Next stop;
//   - failover: a same-profile retry (transient reason, replay-safe, within
//     MaxRetries and the 90 s window, retry-after as floor and at most
//     SDKRetryAfterCapMs) → Next wait; else the profile failure is recorded
//     and the next usable untried profile of the provider is tried
//     (rotation; one for rate_limit and one for overloaded when a later
//     candidate exists) → Next call; else the next candidate (skip/probe
//     rules) → Next call; an unknown reason with no candidate left stops
//     (from rule revision 2 also an unclassified one, and a format error
//     unless FormatAdvances: [decider.terminal]);
//     past the last candidate, the whole-chain overload retry → Next wait,
//     or exhaustion → Next exhausted.
func OnOutcome(st TurnState, env Env, out Outcome) (Decision, error) {
	if st.Phase != PhaseRunning || !st.InFlight {
		return Decision{}, ErrTurnNotRunning
	}
	if !out.OK && !validReason(out.Reason) {
		return Decision{}, fmt.Errorf("%w: %q", ErrBadReason, out.Reason)
	}
	d, err := newDecider(st, env)
	if err != nil {
		return Decision{}, err
	}
	if out.OK {
		return d.succeed(out), nil
	}
	return d.fail(out), nil
}

func (d *decider) fail(out Outcome) Decision {
	p, cur := d.cfg.Params, d.st.Current
	disp := out.Disposition
	if disp == "" {
		disp = DefaultDisposition(out.Reason, out.RequestSizeCeiling)
	}
	ev := events.AttemptFailed{TurnID: d.st.TurnID, Attempt: cur.Attempt, Provider: cur.Provider, Model: cur.Model,
		ProfileID: cur.ProfileID, Error: out.Error, Reason: out.Reason, Status: out.Status, Disposition: disp,
		Evidence: out.Evidence, RetryAfterMs: out.RetryAfterMs, LatencyMs: out.LatencyMs,
		ReplayUnsafe: out.OutputStarted || out.ToolStarted, Reset: copyReset(out.Reset), LongWindow: copyWindow(out.LongWindow),
		ToolBatchSettled: out.ToolBatchSettled}
	if out.RequestSizeCeiling {
		ev.RequestSizeCeiling = append([]int64(nil), out.CeilingTokens...)
	}
	d.emit(ev)
	if disp != DispositionFailover {
		return d.stop(disp, out.Reason, out.Error.MessagePreview)
	}
	limit := p.LoopLimit(len(d.cfg.ProviderProfiles(cur.Provider)))
	underLimit := d.st.CandAttempts < limit
	recovers := underLimit && d.transportRecovery(out)
	// A failure that qualifies for the transport recovery is never
	// counted against the profile, also when a pending live switch is
	// taken instead of the recovery (rule revision 3).
	record := func() { d.recordFailure(out) }
	if recovers {
		record = nil
	}
	if dec, ok := d.takeSwitch(cur.CandidateIndex, &out, record); ok {
		return dec
	}
	if recovers {
		return d.call(cur.CandidateIndex, cur.ProfileID, KindTransportRecovery, false)
	}
	if underLimit && !out.RequestSizeCeiling {
		if dec, ok := d.retry(out); ok {
			return dec
		}
	}
	d.recordFailure(out)
	i := cur.CandidateIndex
	// The next candidate skips TLS-banned providers (reference §7 steps
	// 2 and 7.7).
	later := d.nextIndex(i) >= 0
	if underLimit && !out.RequestSizeCeiling && rotatable.has(out.Reason) {
		allowed := true
		switch out.Reason {
		case ReasonRateLimit:
			allowed = !later || d.st.RateLimitRotations < p.RateLimitRotations
		case ReasonOverloaded:
			allowed = !later || d.st.OverloadedRotations < p.OverloadedRotations
		}
		if allowed {
			c := d.st.Chain[i]
			for _, id := range d.order(c) {
				pr, _ := d.cfg.Profile(id)
				if !contains(d.st.Tried, id) && p.Usable(d.state(pr), c.Model, d.now()) {
					return d.call(i, id, KindRotation, false)
				}
			}
		}
	}
	if d.terminal(out.Reason, later) {
		return d.stop(DispositionFailover, out.Reason, d.surfaced(out))
	}
	d.emit(d.failedRecord(i, out))
	return d.advance(i+1, KindFallback)
}

// recordFailure records the failure of the attempt in flight against its
// profile's health (usageStats), when the policy counts it.
func (d *decider) recordFailure(out Outcome) {
	cur := d.st.Current
	if prof, ok := d.cfg.Profile(cur.ProfileID); ok {
		if e, rec := d.cfg.RecordFailure(d.state(prof), prof, Failure{Reason: out.Reason, Model: cur.Model,
			TurnID: d.st.TurnID, Attempt: cur.Attempt, Reset: copyReset(out.Reset)}, d.now()); rec {
			d.emit(e)
		}
	}
}

// failedRecord is the candidate_failed model_fallback_decision of
// candidate i failing with out.
func (d *decider) failedRecord(i int, out Outcome) events.FallbackStepped {
	r := d.record(DecisionCandidateFailed, i)
	r.Reason, r.Status, r.Code = out.Reason, out.Status, out.Error.Code
	if r.Code == "" {
		r.Code = out.Code
	}
	detail := out.Error.MessagePreview
	if detail == "" {
		detail = out.Error.BodyPreview
	}
	r.ErrorPreview, r.ErrorHash = detail, out.Error.Hash
	d.step(&r, i, out.Reason, detail)
	if r.ErrorPreview == "" {
		r.ErrorPreview = humanReason(out.Reason)
	}
	return r
}

// retry decides a same-profile transient retry (reference §9; seed 000:
// budget 3, 1 s doubling to 30 s, jitter 0.5–1.5, retry-after floor, 90 s
// window for non-rate-limit retries). The provider's wait is the longer
// of its retry-after and the time to its reset ([providerWait]). A rate
// limit is not retried when it is a long usage window, or when its wait
// exceeds MaxRetryDelayMs and another profile or candidate can take the
// call (reference §9).
func (d *decider) retry(out Outcome) (Decision, bool) {
	p, st := d.cfg.Params, d.st
	if !retryable.has(out.Reason) || out.OutputStarted || out.ToolStarted {
		return Decision{}, false
	}
	wait := providerWait(out, d.now())
	if p.SDKRetryAfterCapMs > 0 && wait > p.SDKRetryAfterCapMs {
		return Decision{}, false
	}
	if out.Reason == ReasonRateLimit && out.LongWindow != nil {
		return Decision{}, false
	}
	if out.Reason == ReasonRateLimit && p.MaxRetryDelayMs > 0 && wait > p.MaxRetryDelayMs && d.elsewhere() {
		return Decision{}, false
	}
	budget := p.MaxRetries
	if st.RateLimitSeen && budget > p.RateLimitRetryCap {
		budget = p.RateLimitRetryCap
	}
	if st.Retries >= budget {
		return Decision{}, false
	}
	k := st.Retries + 1
	seed := mixSeed(st.Seed, st.Current.Attempt)
	base, delay := p.JitteredDelay(k, seed)
	if wait >= delay {
		delay = wait
	}
	window := st.RetryWindowEndsAt
	if window == 0 {
		window = d.now() + p.RetryWindowMs
	}
	if out.Reason != ReasonRateLimit && d.now()+delay > window {
		return Decision{}, false
	}
	d.emit(events.RetryScheduled{TurnID: st.TurnID, Attempt: st.Current.Attempt, Retry: k, Budget: budget,
		BaseMs: base, DelayMs: delay, RetryAfterMs: wait, JitterSeed: seed,
		WindowEndsAt: window, ResumeAt: d.now() + delay})
	return d.done(Next{Kind: NextWait, WaitMs: delay, ResumeAt: d.now() + delay}), true
}

func (d *decider) stop(disp, reason, msg string) Decision {
	d.emit(events.TurnStopped{TurnID: d.st.TurnID, Disposition: disp, Reason: reason, Message: msg,
		Attempts: d.st.Attempts, DurationMs: d.now() - d.st.StartedAt})
	return d.done(Next{Kind: NextStop, Disposition: disp, Reason: reason, Message: msg})
}

func (d *decider) succeed(out Outcome) Decision {
	st, cur := d.st, d.st.Current
	d.emit(events.AttemptSucceeded{TurnID: st.TurnID, Attempt: cur.Attempt, Provider: cur.Provider,
		Model: cur.Model, ProfileID: cur.ProfileID, LatencyMs: out.LatencyMs})
	if prof, ok := d.cfg.Profile(cur.ProfileID); ok {
		d.emit(d.cfg.RecordSuccess(d.state(prof), prof, cur.Model, st.TurnID, cur.Attempt, d.now()))
	}
	if len(st.Summary) > 0 || AttemptKind(cur.Kind) == KindProbe {
		r := d.record(DecisionCandidateSucceeded, cur.CandidateIndex)
		if n := len(st.Summary); n > 0 {
			last := st.Summary[n-1]
			r.FallbackStepType = "fallback_step"
			r.FallbackStepFromModel = ModelRef{Provider: last.Provider, Model: last.Model}.String()
			r.FallbackStepToModel = ModelRef{Provider: cur.Provider, Model: cur.Model}.String()
			r.FallbackStepFromReason, r.FallbackStepFromDetail = last.Reason, last.Error
			r.FallbackStepChainPosition, r.FallbackStepFinalOutcome = cur.CandidateIndex+1, StepSucceeded
			r.ConsoleMessage = fmt.Sprintf("model fallback %s: %s (after %s) -> %s", r.Decision,
				r.FallbackStepToModel, r.FallbackStepFromReason, r.FallbackStepFinalOutcome)
		}
		d.emit(r)
	}
	answered := ModelRef{Provider: cur.Provider, Model: cur.Model}
	sess := d.session
	selected := d.selected()
	// Auto pin (seed 000 "Session stickiness"): the profile that answered on
	// the selected provider, unless a user pin exists; from revision 3 not
	// once a user selection replaced the one the turn ran on.
	if cur.ProfileID != "" && cur.Provider == selected.Provider && sess.PinSource != PinUser &&
		(sess.Pin != cur.ProfileID || sess.PinSource != PinAuto) && !(d.v3() && d.selectionReplaced(selected)) {
		if sess.Pin != "" {
			d.emit(events.SessionAuthUnpinned{Session: st.Session, ProfileID: sess.Pin, Source: string(sess.PinSource), Cause: UnpinReplaced})
		}
		d.emit(events.SessionAuthPinned{Session: st.Session, ProfileID: cur.ProfileID, Provider: cur.Provider, Source: string(PinAuto)})
	}
	// A stored auto override whose origin answered is cleared; only when the
	// session still holds that very override (seed 004: recovery owns only
	// the fields it wrote).
	if st.AutoOriginProbe && answered == st.Requested && sess.Source == SourceAuto && sess.Origin == st.Requested {
		d.emit(events.SessionModelCleared{Session: st.Session, Previous: sess.Model, PreviousSource: string(SourceAuto), Cause: "auto_recovered"})
	}
	if !d.originOnOverride(selected, answered) {
		d.noticeState(d.noticeSelected(selected, answered), answered)
	}
	d.emit(events.TurnSucceeded{TurnID: st.TurnID, AnsweredBy: answered, ProfileID: cur.ProfileID,
		Attempts: d.st.Attempts, DurationMs: d.now() - st.StartedAt})
	return d.done(Next{Kind: NextDone, AnsweredBy: answered, ProfileID: cur.ProfileID})
}

// noticeState updates the session's fallback-notice state and sends a
// notice once per change of the selected/active pair (seed 000
// "User-visible fallback notices"; reference §10).
func (d *decider) noticeState(selectedModel, answered ModelRef) {
	st, prev := d.st, d.session.Notice
	selected, active := selectedModel.String(), answered.String()
	if active != selected {
		if prev.Selected == selected && prev.Active == active {
			return
		}
		summary := st.Summary
		if d.v3() && len(summary) == 0 {
			// Answered in a whole-chain overload retry's first call:
			// the reason is that of the pass before.
			summary = st.PassSummary
		}
		reason := ReasonSummary(summary)
		if reason == "" && d.v6() {
			// A turn on a stored auto override that answered on the
			// override after the notice named another fallback: the
			// fallback goes on, for the reason it began (revision 6).
			reason = prev.Reason
		}
		d.emit(events.FallbackNoticeStateChanged{Session: st.Session, Selected: selected, Active: active,
			Reason: reason, Previous: prev.Active, TurnID: st.TurnID})
		d.notice(NoticeFallback, FallbackNoticeText(active, selected, reason))
		return
	}
	if prev.Active == "" {
		return
	}
	d.emit(events.FallbackNoticeStateChanged{Session: st.Session, Selected: selected, Previous: prev.Active, TurnID: st.TurnID})
	d.notice(NoticeFallbackCleared, FallbackClearedNoticeText(selected, prev.Active))
}
