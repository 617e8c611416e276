package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/fledger/fledger/engine"
)

// scriptCaller answers a turn's attempts from its scripted responses: the
// first unused response whose candidate (and profile, when given) matches,
// else the scenario's default; with neither, the run stops with an error
// naming the attempt (the turn's context is cancelled, so the engine
// records nothing for the call and the turn is left unfinished).
type scriptCaller struct {
	turn    *Turn
	def     *Response
	clock   *Clock
	cancel  context.CancelFunc
	used    []int
	missing error
	// during runs a response's During command (the closure runner.turn sets);
	// failed is its error, which stops the run.
	during func(ctx context.Context, attempt int, c *Command) error
	failed error
}

func newScriptCaller(t *Turn, def *Response, clock *Clock, cancel context.CancelFunc) *scriptCaller {
	return &scriptCaller{turn: t, def: def, clock: clock, cancel: cancel, used: make([]int, len(t.Responses))}
}

// Call implements engine.Caller.
func (s *scriptCaller) Call(ctx context.Context, r engine.CallRequest) (engine.Answer, error) {
	cand := r.Provider + "/" + r.Model
	var resp *Response
	for i := range s.turn.Responses {
		x := &s.turn.Responses[i]
		if x.Candidate != cand || (x.Profile != "" && x.Profile != r.ProfileID) || s.used[i] >= max(1, x.Repeat) {
			continue
		}
		s.used[i]++
		resp = x
		break
	}
	if resp == nil && s.def != nil && (s.def.Candidate == "" || s.def.Candidate == cand) {
		resp = s.def
	}
	if resp == nil {
		prof := r.ProfileID
		if prof == "" {
			prof = "no profile"
		}
		s.missing = fmt.Errorf("turn %s attempt %d (%s, %s, %s): %s", r.TurnID, r.Attempt, cand, prof, r.Kind, s.missingText(cand, prof))
		s.cancel()
		return engine.Answer{}, s.missing
	}
	if err := s.clock.Sleep(ctx, time.Duration(resp.LatencyMs)*time.Millisecond); err != nil {
		return engine.Answer{}, err
	}
	if resp.During != nil && s.during != nil && s.firstUse(resp) {
		if err := s.during(ctx, r.Attempt, resp.During); err != nil {
			s.failed = fmt.Errorf("turn %s attempt %d: during: %w", r.TurnID, r.Attempt, err)
			s.cancel()
			return engine.Answer{}, s.failed
		}
	}
	if resp.OK {
		text := resp.Text
		if text == "" {
			text = "(answer from " + cand + ")"
		}
		return engine.Answer{Text: text}, nil
	}
	pe := *resp.Error
	if pe.Provider == "" {
		pe.Provider = r.Provider
	}
	if pe.Model == "" {
		pe.Model = r.Model
	}
	pe.ReceivedAt = s.clock.Now()
	var err error = &pe
	if resp.OutputStarted || resp.ToolStarted {
		// As `fledger serve` reports output_started / tool_started.
		err = &engine.ReplayUnsafeError{Err: err, OutputStarted: resp.OutputStarted, ToolStarted: resp.ToolStarted}
	}
	if resp.ToolBatchSettled {
		err = &engine.ToolBatchSettledError{Err: err}
	}
	return engine.Answer{}, err
}

// firstUse reports whether resp (one of the turn's responses, or the
// default) is answering its first attempt.
func (s *scriptCaller) firstUse(resp *Response) bool {
	for i := range s.turn.Responses {
		if &s.turn.Responses[i] == resp {
			return s.used[i] == 1
		}
	}
	return false
}

// missingText says what an attempt nothing answers lacks: a use step's
// warm-up turn answers its profile only (the default does not apply), a
// scripted turn has no matching response and no default at all, or none
// for this candidate.
func (s *scriptCaller) missingText(cand, prof string) string {
	switch {
	case s.turn.warmUp != "":
		return fmt.Sprintf("the engine called %s, but a use step's warm-up turn answers %s only (the scenario's default does not answer it)", prof, s.turn.warmUp)
	case s.def == nil:
		return "no scripted response matches and the scenario has no default"
	}
	return fmt.Sprintf("no scripted response matches and no default for candidate %s (the default answers %s only)", cand, s.def.Candidate)
}

// unused lists responses never used, as "candidate [profile]".
func (s *scriptCaller) unused() []string {
	var out []string
	for i, r := range s.turn.Responses {
		if s.used[i] == 0 {
			d := r.Candidate
			if r.Profile != "" {
				d += " @" + r.Profile
			}
			out = append(out, fmt.Sprintf("responses[%d] %s", i, d))
		}
	}
	return out
}

var _ engine.Caller = (*scriptCaller)(nil)
