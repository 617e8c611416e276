package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// Chat kinds (TurnStarted.Chat): notices are shown in direct chats only.
const (
	ChatDirect  = "direct"
	ChatGroup   = "group"
	ChatChannel = "channel"
)

// Turn outcomes (TurnResult.Outcome).
const (
	OutcomeSucceeded  = "succeeded"
	OutcomeExhausted  = "exhausted"
	OutcomeStopped    = "stopped"
	OutcomeSwitched   = "switched"
	OutcomeUnfinished = "unfinished"
)

// TurnRequest names one turn to run.
type TurnRequest struct {
	// TurnID identifies the turn ("" = a fresh UUIDv7). It is the turn's
	// aggregate key and every event's correlation id.
	TurnID string
	// Session is the session key (required), e.g.
	// "agent:main:telegram:direct:42".
	Session string
	// Agent is the OpenClaw agent id whose agents.entries model applies
	// ("" = agents.defaults only).
	Agent string
	// Chat is direct | group | channel ("" = direct).
	Chat string
	// Cron is the cron payload when the turn is a cron run (for this turn
	// only: nothing is recorded for the session).
	Cron *policy.CronPayload
	// Select, when set, is a model selection the turn starts from (a
	// gateway's begin with a model: `/model` then the turn; not with
	// Cron): it is recorded for the session as [Engine.SelectModel]
	// records it (nothing when the session already holds exactly it)
	// just before the turn starts, and only when the turn id is new: a
	// begin of a turn that exists records nothing ([Engine.BeginTurn]).
	Select *ModelSelection
	// FallbacksOverride, when not nil, is the caller's fallbacksOverride:
	// the chain is the selected model then exactly these ([] = strict),
	// no configured primary appended (seed 000 "Candidate chain rules").
	FallbacksOverride *[]policy.ModelRef
	// Seed seeds the turn's jitter draws when HasSeed; otherwise the
	// engine's seed source draws one ([WithSeeds]). Recorded in
	// TurnStarted.Seed.
	Seed    uint64
	HasSeed bool
}

// TurnResult is what a turn did. [Engine.RunTurn] returns it whenever
// TurnStarted was appended, also alongside an error.
type TurnResult struct {
	TurnID string
	// Outcome is succeeded | exhausted | stopped | switched, or unfinished when the
	// run ended early (context cancelled, append failed): the log then
	// holds a TurnStarted without an end, and the turn is never reported
	// as succeeded.
	Outcome string
	// Answer is the winning call's answer; AnsweredBy and ProfileID who gave it.
	Answer     Answer
	AnsweredBy events.ModelRef
	ProfileID  string
	// Attempts is the number of provider calls started.
	Attempts int
	// Notices are the user-visible notices of the turn, in order; a notice
	// with Delivered false was recorded but not shown (group/channel).
	Notices []policy.Notice
	// Events are the events the turn appended, in order, with their
	// stream sequences.
	Events []events.Event
}

// RunTurn runs one turn to its end: it records req.Select for the
// session when given (a turn id that exists is refused first,
// ErrTurnExists, with nothing recorded), selects the model and chain from
// the session and the config in force, records TurnStarted, and then, one
// atomic decision at a time, calls the provider through caller,
// classifies the outcome (commands/classify), records it with its
// consequences (cooldowns, rotations, fallback steps, notices) and follows
// the policy's next step, sleeping on the engine's clock for retry
// back-offs and whole-chain overload waits.
//
// It returns the result and nil when a candidate answered; a
// *[ExhaustedError] when every candidate failed; a *[StoppedError] when
// the turn stopped (context overflow → compaction, refusal, abort,
// coordination, final unknown); a *[SwitchError] when a live user switch
// selected a model outside the chain (run the same turn again on it).
// Any other error (context cancelled, store
// failure, [ErrNoConfig], [ErrConflictRetries] — with
// [ErrSelectionMoved] when other selections kept replacing req.Select
// before the start) leaves the turn
// unfinished: result.Outcome is "unfinished" when it had started.
func (e *Engine) RunTurn(ctx context.Context, req TurnRequest, caller Caller) (*TurnResult, error) {
	if caller == nil {
		return nil, fmt.Errorf("%w: nil caller", ErrBadRequest)
	}
	req, err := e.normalizeTurn(req)
	if err != nil {
		return nil, err
	}
	if req.Select != nil {
		// The selection marks the session's running turns: see every one
		// stored so far, and any turn of this id.
		if err := e.Sync(ctx); err != nil {
			return nil, err
		}
	}
	dec, evs, err := e.beginRun(ctx, req)
	if err != nil {
		return nil, err
	}
	h := home{agg: events.AggTurn, key: req.TurnID}
	res := &TurnResult{TurnID: req.TurnID, Outcome: OutcomeUnfinished}
	var answer Answer
	for {
		res.Events = append(res.Events, evs...)
		res.Notices = append(res.Notices, dec.Next.Notices...)
		next := dec.Next
		switch next.Kind {
		case policy.NextCall:
			res.Attempts = next.Call.Attempt
			var out policy.Outcome
			if answer, out, err = e.call(ctx, req, next.Call, caller); err != nil {
				return res, err
			}
			at := e.opt.clock.Now()
			attempt := next.Call.Attempt
			dec, evs, err = e.commitUnder(e.lockOutcome(next.Call.ProfileID, out.OK), func() (policy.Decision, []events.Event, error) {
				return e.commit(ctx, at, h, req.TurnID, func() (policy.Decision, error) {
					st, env, err := e.turnEnv(req.TurnID, at)
					if err != nil {
						return policy.Decision{}, err
					}
					if !st.InFlight || st.Current.Attempt != attempt {
						// Decided again after losing the step (commit's
						// retake): someone else decided this attempt.
						return policy.Decision{}, ErrStepTaken
					}
					return policy.OnOutcome(st, env, out)
				})
			})
		case policy.NextWait:
			if err = e.waitUntil(ctx, next.ResumeAt); err != nil {
				return res, err
			}
			at := e.opt.clock.Now()
			dec, evs, err = e.commit(ctx, at, h, req.TurnID, func() (policy.Decision, error) {
				st, env, err := e.turnEnv(req.TurnID, at)
				if err != nil {
					return policy.Decision{}, err
				}
				if st.Phase != policy.PhaseWaiting {
					return policy.Decision{}, ErrStepTaken
				}
				return policy.Resume(st, env)
			})
		case policy.NextDone:
			res.Outcome, res.Answer = OutcomeSucceeded, answer
			res.AnsweredBy, res.ProfileID = next.AnsweredBy, next.ProfileID
			return res, nil
		case policy.NextExhausted:
			res.Outcome = OutcomeExhausted
			return res, &ExhaustedError{TurnID: req.TurnID, Summary: next.Summary, RawError: next.RawError,
				Attempts: next.Attempts, SoonestCooldownExpiry: next.SoonestCooldownExpiry}
		case policy.NextStop:
			res.Outcome = OutcomeStopped
			return res, &StoppedError{TurnID: req.TurnID, Disposition: next.Disposition, Reason: next.Reason, Message: next.Message}
		case policy.NextSwitch:
			res.Outcome = OutcomeSwitched
			return res, &SwitchError{TurnID: req.TurnID, Session: req.Session, Model: next.SwitchTo, ProfileID: next.ProfileID, Message: next.Message}
		default:
			return res, fmt.Errorf("engine: unknown next step %q", next.Kind)
		}
		if err != nil {
			return res, err
		}
	}
}

// call performs one provider call and turns its result into an Outcome.
// Latency is measured on the engine's clock.
func (e *Engine) call(ctx context.Context, req TurnRequest, c *policy.Call, caller Caller) (Answer, policy.Outcome, error) {
	start := e.opt.clock.Now()
	ans, err := caller.Call(ctx, CallRequest{Provider: c.Provider, Model: c.Model, ProfileID: c.ProfileID,
		Attempt: c.Attempt, CandidateIndex: c.CandidateIndex, Kind: string(c.Kind), TurnID: req.TurnID, Session: req.Session})
	end := e.opt.clock.Now()
	if cerr := ctx.Err(); cerr != nil {
		// The turn's own context ended: the engine is going away, not the
		// provider failing. Record nothing; the turn stays unfinished.
		return Answer{}, policy.Outcome{}, cerr
	}
	lat := max(end.Sub(start).Milliseconds(), 0)
	if err == nil {
		return ans, policy.Outcome{OK: true, LatencyMs: lat}, nil
	}
	return Answer{}, outcomeOf(err, end, lat), nil
}

// waitUntil sleeps on the engine's clock until resumeAt (Unix ms).
func (e *Engine) waitUntil(ctx context.Context, resumeAt int64) error {
	for {
		now := e.opt.clock.Now()
		if events.Millis(now) >= resumeAt {
			return nil
		}
		if err := e.opt.clock.Sleep(ctx, events.FromMillis(resumeAt).Sub(now)); err != nil {
			return err
		}
	}
}

// turnEnv returns a running turn's state and its Env at. Call with the
// state's read lock held.
func (e *Engine) turnEnv(turnID string, at time.Time) (policy.TurnState, policy.Env, error) {
	st, ok := e.st.turns[turnID]
	if !ok {
		return st, policy.Env{}, fmt.Errorf("engine: turn %q is not in the engine's state", turnID)
	}
	cfg := e.st.configs[st.ConfigHash]
	if cfg == nil {
		return st, policy.Env{}, fmt.Errorf("%w: turn %q ran under config %s", ErrNoConfig, turnID, st.ConfigHash)
	}
	return st, e.st.env(cfg, st.Session, events.Millis(at)), nil
}

// beginRun is RunTurn's start: the turn id held (beginLocks) from its
// look-up to its start, not for the turn's calls.
func (e *Engine) beginRun(ctx context.Context, req TurnRequest) (policy.Decision, []events.Event, error) {
	release := e.blocks.lockFor(req)
	defer release()
	if _, ok, err := e.LookupTurn(ctx, req.TurnID); err != nil || ok {
		if err != nil {
			return policy.Decision{}, nil, err
		}
		// The fold checks a turn it holds (decideStart); this one was
		// evicted (or is not folded yet).
		return policy.Decision{}, nil, fmt.Errorf("%w: %q", ErrTurnExists, req.TurnID)
	}
	if err := e.checkNewIDs(req); err != nil {
		return policy.Decision{}, nil, err
	}
	return e.startTurn(ctx, req)
}
