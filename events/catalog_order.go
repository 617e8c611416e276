package events

// AuthOrderSet records the per-agent stored auth-profile order override for
// one provider (`openclaw models auth order set --provider <id> <ids…>`,
// seed 000 "Rotation order"; reference §5). It is the first source of the
// rotation order, ahead of auth.order[provider] and the configured profiles.
// An empty ProfileIDs clears the override (the order falls back to
// auth.order / the configured profiles). Key: the provider id.
type AuthOrderSet struct {
	Provider string `json:"provider"`
	// ProfileIDs is the stored order, every id a configured profile of
	// Provider, no duplicates; absent or empty clears the override.
	ProfileIDs []string `json:"profile_ids,omitempty"`
	// By names who set it (an operator, "cli", "api", "scenario").
	By string `json:"by,omitempty"`
}

func (AuthOrderSet) EventType() string         { return "AuthOrderSet" }
func (AuthOrderSet) EventAggregate() Aggregate { return AggOrder }
func (e AuthOrderSet) EventKey() string        { return e.Provider }
