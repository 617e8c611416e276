package scenario

import (
	"context"
	"fmt"
)

// SeedSession is the session a use step's warm-up turn runs on:
// "seed:<profile>".
func SeedSession(profile string) string { return "seed:" + profile }

// use seeds a profile's lastUsed the way a gateway does: a one-call
// warm-up turn on the profile's own session (SeedSession), after `/model
// <model>@<profile>` there — a strict user selection with a user pin, so
// the one call goes to that profile — answered at once. The profile's
// lastUsed becomes the step's moment, through the engine's own success
// decision; the turn and the selection are on the ledger like any other.
// It fails when the engine does not call that profile (it is in cooldown
// or disabled, say): nothing answers another one.
func (r *runner) use(ctx context.Context, c *Command) ([]string, error) {
	evs, err := r.eng.SelectModel(ctx, c.Session, modelRef(c.Model), "user", nil, c.Profile)
	if err != nil {
		return nil, fmt.Errorf("use %s: %w", c.Profile, err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	t := &Turn{ID: c.turnID, Session: c.Session, Responses: []Response{{Candidate: c.Model, Profile: c.Profile, OK: true}}, warmUp: c.Profile}
	tr, err := r.turn(ctx, t, nil)
	if tr != nil {
		types = append(types, tr.types...)
	}
	if err != nil {
		return types, fmt.Errorf("use %s: %w", c.Profile, err)
	}
	if tr.Outcome != "succeeded" || tr.Profile != c.Profile {
		return types, fmt.Errorf("use %s: the warm-up turn %s was not answered by %s (outcome %s, profile %q)",
			c.Profile, c.turnID, c.Profile, tr.Outcome, tr.Profile)
	}
	return types, nil
}
