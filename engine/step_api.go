package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The step API drives a turn one decision at a time for a gateway that
// makes the provider calls itself (the `fledger serve` protocol): begin a
// turn, report each attempt's outcome, resume after a wait. Every step is
// decided and appended exactly as [Engine.RunTurn] does it (same
// deciders, same atomic guarded commit, same conflict re-decide), and the
// turn's state lives only in the stream, so any engine on the stream —
// in this process or another — can take the next step of a turn another
// began: each step first syncs with the stream's last sequence.

// Errors of the step API.
var (
	// ErrTurnExists: BeginTurn with the id of a turn that exists (for
	// another session). errors.Is(err, ErrBadRequest) holds too.
	ErrTurnExists = fmt.Errorf("%w: turn already exists", ErrBadRequest)
	// ErrUnknownTurn: no TurnStarted with that id in the agent's stream.
	ErrUnknownTurn = errors.New("engine: unknown turn")
	// ErrAttemptNotPlanned: an outcome for an attempt the turn never
	// started (see [AttemptError]).
	ErrAttemptNotPlanned = errors.New("engine: attempt was never planned")
	// ErrOutcomeMismatch: an outcome for an attempt already reported with
	// the other result (ok vs error).
	ErrOutcomeMismatch = errors.New("engine: attempt already reported with another result")
)

// AttemptError is ErrAttemptNotPlanned or ErrOutcomeMismatch with the
// turn's numbers.
type AttemptError struct {
	Err     error
	TurnID  string
	Attempt int
	// Planned is the number of attempts the turn has started.
	Planned int
}

func (e *AttemptError) Error() string {
	return fmt.Sprintf("%v: turn %s attempt %d (attempts started: %d)", e.Err, e.TurnID, e.Attempt, e.Planned)
}

// Unwrap returns the sentinel.
func (e *AttemptError) Unwrap() error { return e.Err }

// WaitNotOverError is returned by [Engine.ResumeTurn] before the turn's
// wait is over. errors.Is(err, policy.ErrWaitNotOver) holds.
type WaitNotOverError struct {
	TurnID string
	// ResumeAt is when the turn may resume (Unix ms); RemainingMs how long
	// that is from the engine clock's now.
	ResumeAt    int64
	RemainingMs int64
}

func (e *WaitNotOverError) Error() string {
	return fmt.Sprintf("engine: turn %s waits %d ms more (resume at %d)", e.TurnID, e.RemainingMs, e.ResumeAt)
}

// Unwrap returns policy.ErrWaitNotOver.
func (e *WaitNotOverError) Unwrap() error { return policy.ErrWaitNotOver }

// Step is the result of one step of a turn.
type Step struct {
	TurnID string
	// Next is what the gateway does now. For a wait, Next.WaitMs counts
	// from the decision (or, Replayed, from the engine clock's now) and
	// Next.ResumeAt is absolute.
	Next policy.Next
	// Replayed is true when nothing was appended because the step had
	// already been decided (a repeated outcome report, a repeated resume):
	// Next is then rebuilt from the recorded decision.
	Replayed bool
	// Events are the events this step appended (none when Replayed).
	Events []events.Event
}

// AttemptReport is a gateway's report of one attempt's outcome.
type AttemptReport struct {
	// Attempt is the 1-based attempt number the call was made for.
	Attempt int
	// OK is true when the call answered; Err is otherwise the call's
	// error: a *classify.ProviderError (its Provider and Model default to
	// the attempt's, ReceivedAt to the engine's now), any Go error
	// (classify.FromError), either wrapped in a *[ReplayUnsafeError]
	// and/or a *[ToolBatchSettledError].
	OK  bool
	Err error
	// LatencyMs is how long the call took (0 = unknown).
	LatencyMs int64
}

// Clock returns the engine's clock.
func (e *Engine) Clock() Clock { return e.opt.clock }

// BeginTurn opens a turn like [Engine.RunTurn] and returns its first
// step (usually a call; exhausted when every candidate is skipped): it
// records req.Select for the session when given (nothing when the session
// already holds exactly it), then the TurnStarted.
//
// A TurnID that names an existing turn appends nothing, the selection
// included: of the same session and the same request
// ([BeginMismatchError] lists what is compared), it returns that turn's
// current step (Replayed), so a gateway may re-send a begin whose answer
// it lost; of the same session with another request, a
// *[BeginMismatchError] (ErrBeginMismatch); of another session,
// ErrTurnExists.
//
// Errors: ErrBadRequest (session, chat, selection), ErrNoConfig, the
// deciders' errors, store errors, ErrConflictRetries (with
// ErrSelectionMoved when other selections of the session kept replacing
// req.Select before the start), and a *[NoNextStepError] for an existing
// turn whose log holds no step.
func (e *Engine) BeginTurn(ctx context.Context, req TurnRequest) (*Step, error) {
	req, err := e.normalizeTurn(req)
	if err != nil {
		return nil, err
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	release := e.blocks.lockFor(req)
	defer release()
	if s, ok, err := e.existingTurn(ctx, req); ok || err != nil {
		return s, err
	}
	if err := e.checkNewIDs(req); err != nil {
		return nil, err
	}
	dec, evs, err := e.startTurn(ctx, req)
	if errors.Is(err, ErrTurnExists) || errors.Is(err, ErrStepTaken) {
		if s, ok, err := e.existingTurn(ctx, req); ok || err != nil {
			return s, err
		}
	}
	if err != nil {
		return nil, err
	}
	return &Step{TurnID: req.TurnID, Next: dec.Next, Events: evs}, nil
}

func (e *Engine) existingTurn(ctx context.Context, req TurnRequest) (*Step, bool, error) {
	t, ok, err := e.LookupTurn(ctx, req.TurnID)
	if err != nil || !ok {
		return nil, false, err
	}
	if t.Session != req.Session {
		return nil, true, fmt.Errorf("%w: %q (session %q)", ErrTurnExists, req.TurnID, t.Session)
	}
	sum, err := e.turnHistory(ctx, req.TurnID, finishedPhase(t.Phase))
	if err != nil {
		return nil, true, err
	}
	if sum == nil {
		return nil, true, fmt.Errorf("%w: %q", ErrUnknownTurn, req.TurnID)
	}
	if m := beginMismatch(req, sum.started); m != nil {
		return nil, true, m
	}
	s, err := e.replayed(req.TurnID, sum, sum.last)
	return s, true, err
}

// ReportOutcome records the outcome of attempt r.Attempt of turn turnID
// and returns the next step: the same decision [Engine.RunTurn] takes
// after a call (classification, retry, cooldown, rotation, fallback,
// notices, end of turn), appended as one atomic commit.
//
// Idempotent: when that attempt's outcome is already recorded (a repeated
// report, here or on another instance), nothing is appended and the
// recorded decision's next step is returned (Replayed). Errors:
// ErrUnknownTurn; an *[AttemptError] for an attempt never started
// (ErrAttemptNotPlanned) or already reported with another result: the
// other of success and failure, or another failure — provider error,
// output or tool started, tool batch settled (ErrOutcomeMismatch); ErrBadRequest (attempt < 1, an error report
// without an error); store errors; ErrConflictRetries.
func (e *Engine) ReportOutcome(ctx context.Context, turnID string, r AttemptReport) (*Step, error) {
	if turnID == "" {
		return nil, fmt.Errorf("%w: empty turn id", ErrBadRequest)
	}
	if r.Attempt < 1 {
		return nil, fmt.Errorf("%w: attempt %d < 1", ErrBadRequest, r.Attempt)
	}
	if !r.OK && r.Err == nil {
		return nil, fmt.Errorf("%w: an outcome is ok or has an error", ErrBadRequest)
	}
	if r.LatencyMs < 0 || r.LatencyMs > events.MaxExactInt {
		return nil, fmt.Errorf("%w: latency_ms %d is not from 0 to %d", ErrBadRequest, r.LatencyMs, int64(events.MaxExactInt))
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	st, ok, err := e.LookupTurn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTurn, turnID)
	}
	if r.Attempt > st.Attempts {
		return nil, &AttemptError{Err: ErrAttemptNotPlanned, TurnID: turnID, Attempt: r.Attempt, Planned: st.Attempts}
	}
	if st.Phase == policy.PhaseRunning && st.InFlight && st.Current.Attempt == r.Attempt {
		at := e.opt.clock.Now()
		out := e.outcome(r, st.Current, at)
		dec, evs, err := e.commitUnder(e.lockOutcome(st.Current.ProfileID, out.OK), func() (policy.Decision, []events.Event, error) {
			return e.commit(ctx, at, home{agg: events.AggTurn, key: turnID}, turnID, func() (policy.Decision, error) {
				if cur := e.st.turns[turnID]; cur.Phase != policy.PhaseRunning || !cur.InFlight || cur.Current.Attempt != r.Attempt {
					return policy.Decision{}, ErrStepTaken
				}
				cur, env, err := e.turnEnv(turnID, at)
				if err != nil {
					return policy.Decision{}, err
				}
				return policy.OnOutcome(cur, env, out)
			})
		})
		if !errors.Is(err, ErrStepTaken) {
			if err != nil {
				return nil, err
			}
			return &Step{TurnID: turnID, Next: dec.Next, Events: evs}, nil
		}
	}
	sum, err := e.turnHistory(ctx, turnID, finishedPhase(st.Phase))
	if err != nil {
		return nil, err
	}
	if sum == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTurn, turnID)
	}
	if o, ok := sum.outcome(r.Attempt); ok {
		if o.ok != r.OK || !r.OK && !sameFailure(o.failed, r.Err) {
			return nil, &AttemptError{Err: ErrOutcomeMismatch, TurnID: turnID, Attempt: r.Attempt, Planned: st.Attempts}
		}
		return e.replayed(turnID, sum, o.next)
	}
	// Started but never decided: the turn ended without it (it cannot be
	// in flight here). Report the turn's current step.
	return e.replayed(turnID, sum, sum.last)
}

// outcome turns a report into the decider's Outcome at at.
func (e *Engine) outcome(r AttemptReport, cur events.AttemptStarted, at time.Time) policy.Outcome {
	if r.OK {
		return policy.Outcome{OK: true, LatencyMs: r.LatencyMs}
	}
	err := r.Err
	var pe *classify.ProviderError
	if errors.As(err, &pe) && (pe.Provider == "" || pe.Model == "" || pe.ReceivedAt.IsZero()) {
		cp := *pe
		if cp.Provider == "" {
			cp.Provider = cur.Provider
		}
		if cp.Model == "" {
			cp.Model = cur.Model
		}
		if cp.ReceivedAt.IsZero() {
			cp.ReceivedAt = at
		}
		var unsafe *ReplayUnsafeError
		if errors.As(err, &unsafe) {
			err = &ReplayUnsafeError{Err: &cp, OutputStarted: unsafe.OutputStarted, ToolStarted: unsafe.ToolStarted}
		} else {
			err = &cp
		}
	}
	out := outcomeOf(err, at, r.LatencyMs)
	out.ToolBatchSettled = toolBatchSettled(r.Err)
	return out
}

// ResumeTurn continues a turn after a wait ([policy.NextWait]) once its
// ResumeAt has come on the engine's clock: a same-profile retry's call, or
// the next whole-chain overload round (or, inside a long chain wait, the
// overload notice and a wait for the rest). Before ResumeAt it returns a
// *[WaitNotOverError]. On a turn that is not waiting (already resumed,
// here or elsewhere; in flight; finished) it appends nothing and returns
// the turn's current step (Replayed). Errors: ErrUnknownTurn, store
// errors, ErrConflictRetries.
func (e *Engine) ResumeTurn(ctx context.Context, turnID string) (*Step, error) {
	if turnID == "" {
		return nil, fmt.Errorf("%w: empty turn id", ErrBadRequest)
	}
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	st, ok, err := e.LookupTurn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTurn, turnID)
	}
	if st.Phase == policy.PhaseWaiting {
		at := e.opt.clock.Now()
		dec, evs, err := e.commit(ctx, at, home{agg: events.AggTurn, key: turnID}, turnID, func() (policy.Decision, error) {
			if cur := e.st.turns[turnID]; cur.Phase != policy.PhaseWaiting || cur.ResumeAt != st.ResumeAt {
				return policy.Decision{}, ErrStepTaken
			}
			cur, env, err := e.turnEnv(turnID, at)
			if err != nil {
				return policy.Decision{}, err
			}
			return policy.Resume(cur, env)
		})
		switch {
		case errors.Is(err, policy.ErrWaitNotOver):
			return nil, &WaitNotOverError{TurnID: turnID, ResumeAt: st.ResumeAt, RemainingMs: max(st.ResumeAt-events.Millis(at), 0)}
		case errors.Is(err, ErrStepTaken):
		case err != nil:
			return nil, err
		default:
			return &Step{TurnID: turnID, Next: dec.Next, Events: evs}, nil
		}
	}
	return e.CurrentStep(ctx, turnID)
}

// CurrentStep returns turn turnID's current step, rebuilt from its last
// recorded decision (Replayed): the call in flight, the wait in progress
// (WaitMs from the engine clock's now), or how it ended. It appends
// nothing. Errors: ErrUnknownTurn, store errors.
func (e *Engine) CurrentStep(ctx context.Context, turnID string) (*Step, error) {
	if err := e.Sync(ctx); err != nil {
		return nil, err
	}
	t, ok, err := e.LookupTurn(ctx, turnID)
	if err != nil {
		return nil, err
	}
	var sum *turnSummary
	if ok {
		if sum, err = e.turnHistory(ctx, turnID, finishedPhase(t.Phase)); err != nil {
			return nil, err
		}
	}
	if sum == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTurn, turnID)
	}
	return e.replayed(turnID, sum, sum.last)
}

// turnCommit is one decision of a turn as read back from the stream: its
// events (those correlated with the turn), its time, and the turn's state
// after it.
type turnCommit struct {
	seq    uint64
	at     time.Time
	events []events.Event
	after  policy.TurnState
}

// turnLog reads turn turnID's decisions back from the stream, from its
// TurnStarted to its end (or to the state's applied sequence), folding
// the turn into a policy.World as it goes. The turn's commits are
// stored under its own subject and under profile subjects, so after
// locating TurnStarted (a read of the turn subject) it scans the stream
// from there; it stops at the commit that ends the turn (ended: the log
// holds it, and so never changes). A lookup of an old turn (old: not
// in memory, or finished; or started farTurnStart sequences or more
// before the applied one) waits for one of the engine's bounded range
// reads (turn_lookup.go).
func (e *Engine) turnLog(ctx context.Context, turnID string, old bool) (out []turnCommit, ended bool, err error) {
	subject, err := events.Subject(e.agent, events.AggTurn, turnID)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	own, _, err := e.store.ReadSubject(ctx, subject)
	if err != nil {
		return nil, false, err
	}
	from := uint64(0)
	for _, ev := range own {
		if _, ok := ev.Data.(events.TurnStarted); ok {
			from = ev.Seq
			break
		}
	}
	if from == 0 {
		return nil, false, nil
	}
	// A turn in memory has no commit after its last one (turnLast).
	e.st.mu.RLock()
	upTo := e.st.applied
	if last, ok := e.st.turnLast[turnID]; ok {
		upTo = min(upTo, last)
	}
	far := e.st.applied-min(from, e.st.applied) >= farTurnStart
	e.st.mu.RUnlock()
	old = old || far
	if old {
		if err := e.lookups.acquire(ctx); err != nil {
			return nil, false, err
		}
		defer e.lookups.release()
	}

	var w policy.World
	for ev, err := range e.readTurnRange(ctx, from, upTo, old) {
		if err != nil {
			var de *events.DecodeError
			if errors.As(err, &de) {
				continue
			}
			return nil, false, err
		}
		if ev.Seq > upTo || (ended && ev.Seq != out[len(out)-1].seq) {
			break
		}
		if ev.Agent != e.agent || (ev.CorrelationID != turnID && !(ev.Aggregate == events.AggTurn && ev.Key == turnID)) {
			continue
		}
		if n := len(out); n == 0 || out[n-1].seq != ev.Seq {
			out = append(out, turnCommit{seq: ev.Seq, at: ev.At})
		}
		c := &out[len(out)-1]
		c.events = append(c.events, ev)
		w.FoldEvent(&ev)
		c.after = w.Turn()
		switch ev.Data.(type) {
		case events.TurnSucceeded, events.TurnExhausted, events.TurnStopped, events.TurnSwitched:
			ended = true
		}
	}
	return out, ended, nil
}

// replayed is the Step of a recorded decision's Next n of the turn
// summarised by sum (a copy; notices included); a wait's WaitMs counts
// from the engine clock's now. A Next of no kind (the turn's log leaves
// it neither in flight, waiting nor ended: a TurnStarted with an empty
// chain, which no engine writes) is a *[NoNextStepError].
func (e *Engine) replayed(turnID string, sum *turnSummary, n policy.Next) (*Step, error) {
	if n.Kind == "" {
		return nil, &NoNextStepError{TurnID: turnID, Seq: sum.lastSeq, Phase: string(sum.state.Phase), Chain: len(sum.started.Chain)}
	}
	n = cloneNext(n)
	if n.Kind == policy.NextWait {
		n.WaitMs = max(n.ResumeAt-events.Millis(e.opt.clock.Now()), 0)
	}
	return &Step{TurnID: turnID, Next: n, Replayed: true}, nil
}

func (e *Engine) turnConfig(hash string) *policy.Config {
	e.st.mu.RLock()
	defer e.st.mu.RUnlock()
	return e.st.configs[hash]
}

// nextOf is the Next the decision c returned, rebuilt from its events and
// the turn's state after it: how the turn ended, else the wait it
// scheduled (a whole-chain wait wakes early when the overload notice
// falls inside it, as policy's endOfPass decides), else the call it
// started.
func nextOf(c *turnCommit, cfg *policy.Config) policy.Next {
	var n policy.Next
	for _, ev := range c.events {
		switch p := ev.Data.(type) {
		case events.NoticeSent:
			n.Notices = append(n.Notices, policy.Notice{Kind: policy.NoticeKind(p.Kind), Text: p.Text, Delivered: p.Delivered})
		case events.TurnSucceeded:
			n.Kind, n.AnsweredBy, n.ProfileID = policy.NextDone, p.AnsweredBy, p.ProfileID
		case events.TurnExhausted:
			n.Kind, n.Summary, n.SoonestCooldownExpiry = policy.NextExhausted, p.Summary, p.SoonestCooldownExpiry
			n.Attempts = append([]events.ExhaustedAttempt(nil), p.Attempts...)
			if len(p.Attempts) <= 1 {
				n.RawError = true
				if len(p.Attempts) == 1 {
					n.Summary = p.Attempts[0].Error
				}
			}
		case events.TurnStopped:
			n.Kind, n.Disposition, n.Reason, n.Message = policy.NextStop, p.Disposition, p.Reason, p.Message
		case events.TurnSwitched:
			n.Kind, n.SwitchTo, n.ProfileID, n.Message = policy.NextSwitch, p.Model, p.ProfileID, p.Message
		}
	}
	if n.Kind != "" {
		return n
	}
	st := c.after
	switch {
	case st.Phase == policy.PhaseWaiting:
		wake, now := st.ResumeAt, events.Millis(c.at)
		if st.Pending == policy.PendingChain && !st.OverloadNoticeSent && cfg != nil {
			if at := st.ResumeAt - st.WaitedMs + cfg.ChainOverloadNoticeAfterMs; at <= st.ResumeAt && at > now {
				wake = at
			}
		}
		n.Kind, n.WaitMs, n.ResumeAt = policy.NextWait, wake-now, wake
	case st.InFlight:
		cur := st.Current
		n.Kind = policy.NextCall
		n.Call = &policy.Call{Provider: cur.Provider, Model: cur.Model, ProfileID: cur.ProfileID, Attempt: cur.Attempt,
			CandidateIndex: cur.CandidateIndex, Kind: policy.AttemptKind(cur.Kind), Round: cur.Round}
	}
	return n
}
