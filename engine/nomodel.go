package engine

import (
	"fmt"

	"github.com/fledger/fledger/commands/policy"
)

// NoModelError is returned when a turn cannot start because no model is
// selected for the session and the config in force names no primary
// model (an empty config). It is a missing-configuration error:
// errors.Is(err, ErrNoConfig) and errors.Is(err, policy.ErrNoModel) both
// hold.
type NoModelError struct {
	// Agent is the agent the turn ran for (the OpenClaw agent id, else the
	// engine's agent).
	Agent string
}

func (e *NoModelError) Error() string {
	return fmt.Sprintf("no model configured for agent %s: set agents.defaults.model.primary (or select a model for the session with /model)", e.Agent)
}

// Is makes errors.Is(err, ErrNoConfig) true.
func (e *NoModelError) Is(target error) bool { return target == ErrNoConfig }

// Unwrap returns policy.ErrNoModel.
func (e *NoModelError) Unwrap() error { return policy.ErrNoModel }
