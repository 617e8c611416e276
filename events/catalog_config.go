package events

import "encoding/json"

// ConfigApplied records the failover config in force from now on. Every
// TurnStarted names the ConfigHash it ran under, so replay re-decides with
// the same rules. Emitted when a config is loaded whose hash differs from the
// last ConfigApplied of the agent. Key: the config hash.
type ConfigApplied struct {
	// Hash is "sha256:<hex>" of the canonical JSON of Config.
	Hash string `json:"hash"`
	// Config is the canonical JSON of the config (no secrets: config holds
	// metadata and routing only, seed 000 "Auth storage").
	Config json.RawMessage `json:"config"`
	// Source says where it came from (a file path, "scenario", "api").
	Source string `json:"source,omitempty"`
	// Warnings lists unknown keys and other non-fatal findings.
	Warnings []string `json:"warnings,omitempty"`
}

func (ConfigApplied) EventType() string         { return "ConfigApplied" }
func (ConfigApplied) EventAggregate() Aggregate { return AggConfig }
func (e ConfigApplied) EventKey() string        { return e.Hash }
