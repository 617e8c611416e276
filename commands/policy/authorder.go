package policy

import (
	"errors"
	"fmt"

	"github.com/fledger/fledger/events"
)

// ErrBadOrder is returned by [Config.SetOrder] for an order that cannot be
// stored: no provider, a duplicate id, or an id of another provider.
var ErrBadOrder = errors.New("policy: invalid auth order")

// SetOrder decides `models auth order set --provider <provider> <ids…>`
// (seed 000 "Rotation order"; reference §5): the per-agent stored order
// override that [Config.ResolveOrder] puts ahead of auth.order. Every id must
// be a configured profile of provider (ErrUnknownProfile for an unknown id,
// ErrBadOrder for another provider's profile or a duplicate; the error names
// the id). An empty ids clears the override. by names who set it.
func (c Config) SetOrder(provider string, ids []string, by string) (events.AuthOrderSet, error) {
	if provider == "" {
		return events.AuthOrderSet{}, fmt.Errorf("%w: empty provider", ErrBadOrder)
	}
	out := events.AuthOrderSet{Provider: provider, By: by}
	if len(ids) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(ids))
	list := make([]string, 0, len(ids))
	for _, id := range ids {
		p, ok := c.Profile(id)
		if !ok {
			return events.AuthOrderSet{}, fmt.Errorf("%w: %q is not a configured profile", ErrUnknownProfile, id)
		}
		if p.Provider != provider {
			return events.AuthOrderSet{}, fmt.Errorf("%w: %q is a profile of provider %q, not %q", ErrBadOrder, id, p.Provider, provider)
		}
		if seen[id] {
			return events.AuthOrderSet{}, fmt.Errorf("%w: %q is listed twice", ErrBadOrder, id)
		}
		seen[id] = true
		list = append(list, id)
	}
	out.ProfileIDs = list
	return out, nil
}

// EvolveOrder folds an order event into a provider's stored order: an
// AuthOrderSet replaces it (nil when cleared); other events leave it.
func EvolveOrder(cur []string, p events.Payload) []string {
	if e, ok := p.(events.AuthOrderSet); ok {
		if len(e.ProfileIDs) == 0 {
			return nil
		}
		return append([]string(nil), e.ProfileIDs...)
	}
	return cur
}
