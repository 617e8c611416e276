package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fledger/fledger/events"
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
// A profile the engine would not call now for that model (disabled,
// blocked, cooling down) is refused before anything is recorded: the
// warm-up call would be a probe that clears its state, not a seed. It
// fails, too, when the engine calls another profile: nothing answers it.
func (r *runner) use(ctx context.Context, c *Command) ([]string, error) {
	if why := r.unusable(c); why != "" {
		return nil, fmt.Errorf("use %s: %s: a use step seeds a profile the engine can call now, so it recorded nothing", c.Profile, why)
	}
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

// unusable says why the engine would not call a use step's profile for
// its model now ("" = it would), as policy.Params.Usable decides: disabled
// (every model), blocked or cooling down (every model, or this one).
func (r *runner) unusable(c *Command) string {
	s := r.eng.Profile(c.Profile)
	now := events.Millis(r.clock.Now())
	model := modelRef(c.Model).Model
	if r.sc.Loaded.Policy.Params.Usable(s, model, now) {
		return ""
	}
	until := func(what string, ms int64, reason, scope string) string {
		parts := []string{r.rep.offset(ms), reason}
		if scope != "" {
			parts = append(parts, "model "+scope)
		}
		return fmt.Sprintf("%s is %s until %s (%s)", c.Profile, what, events.FromMillis(ms).UTC().Format(time.RFC3339Nano), strings.Join(parts, ", "))
	}
	switch {
	case s.DisabledUntil > now:
		return until("disabled", s.DisabledUntil, s.DisabledReason, "")
	case s.BlockedUntil > now && (s.BlockedModel == "" || s.BlockedModel == model):
		return until("blocked", s.BlockedUntil, s.BlockedReason, s.BlockedModel)
	}
	return until("cooling down", s.CooldownUntil, s.CooldownReason, s.CooldownModel)
}
