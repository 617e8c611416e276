package scenario

import (
	"context"
	"testing"
	"time"

	"github.com/fledger/fledger/engine"
)

// An attempt nothing answers stops the run with what is missing: no
// scripted response and no default at all, no default for that
// candidate, or — a use step's warm-up turn — a call to another profile
// than the one it seeds.
func TestScriptCaller_MissingSaysWhatIsMissing(t *testing.T) {
	call := engine.CallRequest{Provider: "openai", Model: "gpt-5", ProfileID: "openai:b", Attempt: 1, Kind: "first", TurnID: "t2"}
	for _, c := range []struct {
		name string
		turn *Turn
		def  *Response
		want string
	}{
		{"no default", &Turn{ID: "t2"}, nil,
			"turn t2 attempt 1 (openai/gpt-5, openai:b, first): no scripted response matches and the scenario has no default"},
		{"a default for another candidate", &Turn{ID: "t2"}, &Response{Candidate: "anthropic/claude-opus-4-6", OK: true},
			"turn t2 attempt 1 (openai/gpt-5, openai:b, first): no scripted response matches and no default for candidate openai/gpt-5 (the default answers anthropic/claude-opus-4-6 only)"},
		{"a warm-up turn", &Turn{ID: "t2", warmUp: "openai:a", Responses: []Response{{Candidate: "openai/gpt-5", Profile: "openai:a", OK: true}}}, nil,
			"turn t2 attempt 1 (openai/gpt-5, openai:b, first): the engine called openai:b, but a use step's warm-up turn answers openai:a only (the scenario's default does not answer it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newScriptCaller(c.turn, c.def, NewClock(time.Time{}, false), cancel)
			if _, err := s.Call(ctx, call); err == nil || err.Error() != c.want {
				t.Errorf("err %v\nwant %s", err, c.want)
			}
			if ctx.Err() == nil {
				t.Error("the turn's context was not cancelled")
			}
		})
	}
}
