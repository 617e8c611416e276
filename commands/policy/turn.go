package policy

import "github.com/fledger/fledger/events"

// AttemptKind is why an attempt is made ([Call.Kind], stored as
// AttemptStarted.Kind).
type AttemptKind string

// Attempt kinds.
const (
	KindFirst      AttemptKind = "first"
	KindRetry      AttemptKind = "retry"
	KindRotation   AttemptKind = "rotation"
	KindFallback   AttemptKind = "fallback"
	KindProbe      AttemptKind = "probe"
	KindChainRetry AttemptKind = "chain_retry"
	// KindLiveSwitch is the call a pending live switch jumps to (rule
	// revision 3).
	KindLiveSwitch AttemptKind = "live_switch"
	// KindTransportRecovery continues the same call after a transport
	// failure that followed a settled tool batch (rule revision 3).
	KindTransportRecovery AttemptKind = "transport_recovery"
)

// TurnPhase is where a turn is ([TurnState.Phase]).
type TurnPhase string

// Turn phases.
const (
	PhaseRunning   TurnPhase = "running"
	PhaseWaiting   TurnPhase = "waiting"
	PhaseSucceeded TurnPhase = "succeeded"
	PhaseExhausted TurnPhase = "exhausted"
	PhaseStopped   TurnPhase = "stopped"
	// PhaseSwitched: a live switch handed the turn back (TurnSwitched).
	PhaseSwitched TurnPhase = "switched"
)

// Open reports whether a turn in phase p is running or waiting: begun
// and not finished.
func (p TurnPhase) Open() bool { return p == PhaseRunning || p == PhaseWaiting }

// PendingWait is the wait a turn is in ([TurnState.Pending]; "" = none).
type PendingWait string

// Pending waits.
const (
	PendingRetry PendingWait = "retry"
	PendingChain PendingWait = "chain"
)

// ProbeMark is a primary cooldown probe made in this turn: the provider and
// when (Unix ms); it feeds the probe throttle.
type ProbeMark struct {
	Provider string
	At       int64
}

// TurnState is one turn, folded from its turn events by [EvolveTurn].
// Everything the turn decider needs that is not an argument lives here, so
// the state after a decision always equals the fold of its events.
type TurnState struct {
	// From TurnStarted.
	TurnID          string
	Session         string
	Chat            string
	Requested       ModelRef
	SelectionSource string
	Strict          bool
	Chain           []events.Candidate
	ConfigHash      string
	AttemptLimit    int
	Pin             string
	PinSource       string
	Seed            uint64
	StartedAt       int64
	AutoOriginProbe bool
	// Rules is TurnStarted.Rules as recorded (0 = revision 1; [RulesOf]).
	Rules int
	// SkipCacheSince is TurnStarted.SkipCacheSince as recorded.
	SkipCacheSince int64

	// Phase is running | waiting | succeeded | exhausted | stopped.
	Phase TurnPhase
	// Attempts is the number of attempts started; Current the last one and
	// InFlight whether its outcome is awaited.
	Attempts int
	Current  events.AttemptStarted
	InFlight bool
	// LastFailure is the last AttemptFailed.
	LastFailure events.AttemptFailed
	// Pending is the wait in progress (retry | chain) and ResumeAt its end.
	Pending  PendingWait
	ResumeAt int64

	// Per candidate (reset when a new candidate starts).
	CandAttempts        int
	Tried               []string
	Retries             int
	RetryWindowEndsAt   int64
	RateLimitSeen       bool
	RateLimitRotations  int
	OverloadedRotations int

	// Per chain pass (reset by a whole-chain overload retry).
	Round              int
	WaitedMs           int64
	OverloadNoticeSent bool
	ProbeSlots         []string
	RoundFailures      int
	RoundOnlyOverload  bool
	RoundSkips         int
	Summary            []events.ExhaustedAttempt
	// PassSummary is the Summary of the last chain pass that had one,
	// kept when a whole-chain overload retry starts the next: the reason
	// of a fallback notice after the retry (rule revision 3).
	PassSummary []events.ExhaustedAttempt

	// Whole turn.
	TLSBanned    []string
	ReplayUnsafe bool
	Probes       []ProbeMark

	// Live switching (rule revision 3). Switch is the pending live switch
	// (LiveSwitchMarked) the next decision takes, nil when none; Switched
	// is the model a taken switch jumped to (zero = none): the model the
	// user selected for this turn from then on.
	Switch   *events.LiveSwitchMarked
	Switched ModelRef
	// LastMark is the model of the turn's latest LiveSwitchMarked, taken
	// or not (zero = none): a `/model default` marks the default primary.
	LastMark ModelRef
	// TransportRecoveries counts transport_recovery attempts (at most
	// TransportRecoveryMax a turn).
	TransportRecoveries int
	// StartSeq is the stream sequence of the commit that started the turn
	// (0 = not known: the turn is being started; [NoteSeq]); MarkSeq that
	// of the pending switch's LiveSwitchMarked and SwitchedSeq that of the
	// switch the turn took (the user's selection it jumped to).
	StartSeq    uint64
	MarkSeq     uint64
	SwitchedSeq uint64
	// StartBasis is the basis of the commit that started the turn: the
	// stream position its start was decided on (0 = not known or
	// nothing before it; a commit stored without a basis is read as
	// decided on the sequence before it). SwitchSeenSeq is the stream
	// sequence of the turn's last live_switch record (a switch taken or found to change
	// nothing). Both from [NoteSeq]; read by deriveSwitch (rule revision
	// 5).
	StartBasis    uint64 `json:",omitzero"`
	SwitchSeenSeq uint64 `json:",omitzero"`
	// SwitchedBasis is the basis of the commit of the turn's last taken
	// jump (a live_switch record to a later candidate; 0 = none): the
	// state its decision saw, every user command up to it included
	// (commandedSince, rule revision 5).
	SwitchedBasis uint64 `json:",omitzero"`
}

// grow appends to a copy, never to a shared backing array, so EvolveTurn
// stays pure.
func grow[T any](s []T, v T) []T {
	out := make([]T, len(s), len(s)+1)
	copy(out, s)
	return append(out, v)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (s *TurnState) resetCandidate() {
	s.CandAttempts, s.Tried, s.Retries, s.RetryWindowEndsAt = 0, nil, 0, 0
	s.RateLimitSeen, s.RateLimitRotations, s.OverloadedRotations = false, 0, 0
}

// EvolveTurn folds one turn event into the state. TurnStarted opens a fresh
// state; events of other turns and other aggregates leave it unchanged.
func EvolveTurn(s TurnState, p events.Payload) TurnState {
	s.Evolve(p)
	return s
}

// Evolve is [EvolveTurn] in place: it folds p into s without copying the
// state in and out (a TurnState is over a kilobyte; the projections fold
// every turn event of a rebuild with it).
func (s *TurnState) Evolve(p events.Payload) {
	if _, ok := p.(events.TurnStarted); !ok && (p.EventAggregate() != events.AggTurn || events.KeyOf(p) != s.TurnID) {
		return
	}
	s.apply(p)
}

// apply folds one event of this turn, one case per turn type of the
// catalog; it reports false for a type it does not know
// (TestFold_EveryCatalogTypeIsEvolved).
func (s *TurnState) apply(p events.Payload) bool {
	switch e := p.(type) {
	case events.TurnStarted:
		*s = startTurn(e)
	case events.AttemptStarted:
		s.attemptStarted(e)
	case events.AttemptFailed:
		s.attemptFailed(e)
	case events.AttemptSucceeded:
		s.InFlight = false
	case events.RetryScheduled:
		s.Retries = e.Retry
		if e.WindowEndsAt > 0 {
			s.RetryWindowEndsAt = e.WindowEndsAt
		}
		s.Pending, s.ResumeAt, s.Phase = PendingRetry, e.ResumeAt, PhaseWaiting
	case events.CandidateSkipped:
		s.RoundSkips++
		s.Summary = grow(s.Summary, events.ExhaustedAttempt{Provider: e.Provider, Model: e.Model, Reason: e.Reason, Error: e.Message})
	case events.FallbackStepped:
		if e.Decision == DecisionLiveSwitch {
			s.Switch = nil
			if e.FallbackStepFinalOutcome == StepNextFallback {
				s.Switched = ModelRef{Provider: e.NextCandidateProvider, Model: e.NextCandidateModel}
				s.SwitchedSeq = s.MarkSeq
			}
		}
		if e.Decision == DecisionCandidateFailed {
			r := e.Reason
			if r == "" {
				r = ReasonUnknown
			}
			s.Summary = grow(s.Summary, events.ExhaustedAttempt{Provider: e.CandidateProvider, Model: e.CandidateModel,
				Reason: r, Status: e.Status, Code: e.Code, Error: e.ErrorPreview})
		}
	case events.ChainRetryScheduled:
		if len(s.Summary) > 0 {
			s.PassSummary = s.Summary
		}
		s.Round, s.WaitedMs = e.Round, e.WaitedMs+e.DelayMs
		s.Pending, s.ResumeAt, s.Phase = PendingChain, e.ResumeAt, PhaseWaiting
		s.ProbeSlots, s.RoundFailures, s.RoundOnlyOverload, s.RoundSkips, s.Summary = nil, 0, true, 0, nil
		s.resetCandidate()
	case events.NoticeSent:
		if NoticeKind(e.Kind) == NoticeOverloadWait {
			s.OverloadNoticeSent = true
		}
	case events.TurnSucceeded:
		s.Phase = PhaseSucceeded
	case events.TurnExhausted:
		s.Phase = PhaseExhausted
	case events.TurnStopped:
		s.Phase = PhaseStopped
	case events.LiveSwitchMarked:
		m := e
		s.Switch, s.LastMark = &m, e.Model
	case events.TurnSwitched:
		s.Phase, s.Switch = PhaseSwitched, nil
	default:
		return false
	}
	return true
}

// startTurn is the fresh state a TurnStarted opens.
func startTurn(ts events.TurnStarted) TurnState {
	return TurnState{
		TurnID: ts.TurnID, Session: ts.Session, Chat: ts.Chat, Requested: ts.Requested,
		SelectionSource: ts.SelectionSource, Strict: ts.Strict,
		Chain:      append([]events.Candidate(nil), ts.Chain...),
		ConfigHash: ts.ConfigHash, AttemptLimit: ts.AttemptLimit,
		Pin: ts.PinnedProfile, PinSource: ts.PinSource, Seed: ts.Seed, StartedAt: ts.StartedAt,
		AutoOriginProbe: ts.AutoOriginProbe, Rules: ts.Rules, SkipCacheSince: ts.SkipCacheSince, Phase: PhaseRunning, RoundOnlyOverload: true,
	}
}

// attemptStarted folds an AttemptStarted: a new candidate (not a retry or
// rotation) restarts the candidate's counters; a rotation counts against
// the reason that caused it.
func (s *TurnState) attemptStarted(e events.AttemptStarted) {
	switch AttemptKind(e.Kind) {
	case KindRetry, KindRotation:
	case KindTransportRecovery:
		s.TransportRecoveries++
	default:
		s.resetCandidate()
	}
	if AttemptKind(e.Kind) == KindRotation {
		switch s.LastFailure.Reason {
		case ReasonRateLimit:
			s.RateLimitRotations++
		case ReasonOverloaded:
			s.OverloadedRotations++
		}
	}
	s.Attempts, s.Current, s.InFlight = e.Attempt, e, true
	s.Phase, s.Pending, s.ResumeAt = PhaseRunning, "", 0
	s.CandAttempts++
	if e.ProfileID != "" && !contains(s.Tried, e.ProfileID) {
		s.Tried = grow(s.Tried, e.ProfileID)
	}
	if e.ProbeSlot {
		s.ProbeSlots = grow(s.ProbeSlots, e.Provider)
	}
	if AttemptKind(e.Kind) == KindProbe && e.CandidateIndex == 0 {
		s.Probes = grow(s.Probes, ProbeMark{Provider: e.Provider, At: e.StartedAt})
	}
}

// attemptFailed folds an AttemptFailed: the round's failure counters, the
// reasons the rest of the turn remembers, and the release of a probe slot.
func (s *TurnState) attemptFailed(e events.AttemptFailed) {
	s.InFlight, s.LastFailure = false, e
	s.RoundFailures++
	if e.Reason != ReasonOverloaded {
		s.RoundOnlyOverload = false
	}
	if e.ReplayUnsafe {
		s.ReplayUnsafe = true
	}
	if e.Reason == ReasonRateLimit {
		s.RateLimitSeen = true
	}
	if e.Reason == ReasonTLSCertificate && !contains(s.TLSBanned, e.Provider) {
		s.TLSBanned = grow(s.TLSBanned, e.Provider)
	}
	if s.Current.ProbeSlot && probeSlotReleased.has(e.Reason) {
		s.releaseProbeSlot(e.Provider)
	}
}

// releaseProbeSlot drops the last probe slot held on provider.
func (s *TurnState) releaseProbeSlot(provider string) {
	for i := len(s.ProbeSlots) - 1; i >= 0; i-- {
		if s.ProbeSlots[i] == provider {
			out := make([]string, 0, len(s.ProbeSlots)-1)
			out = append(append(out, s.ProbeSlots[:i]...), s.ProbeSlots[i+1:]...)
			s.ProbeSlots = out
			return
		}
	}
}
