package policy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fledger/fledger/events"
)

// ErrBadOrder is returned by [Config.SetOrder] for an order that cannot be
// stored: no provider, a duplicate id, or an id of another provider.
var ErrBadOrder = errors.New("policy: invalid auth order")

// CheckOrderProvider refuses (ErrBadOrder, naming the configured
// providers) a provider that no configured profile has: an order stored
// for it could never apply, and a typo ("anthr.opic", "*") would be
// recorded as if it meant something. It is checked when an order is set or
// cleared (engine.SetAuthOrder), not by [Config.SetOrder], so an order an
// earlier release recorded for such a provider still verifies.
func (c Config) CheckOrderProvider(provider string) error {
	if provider == "" {
		return fmt.Errorf("%w: empty provider", ErrBadOrder)
	}
	var known []string
	for _, p := range c.Profiles {
		if p.Provider == provider {
			return nil
		}
		if len(known) == 0 || known[len(known)-1] != p.Provider {
			known = append(known, p.Provider)
		}
	}
	sort.Strings(known)
	known = slices.Compact(known)
	if len(known) == 0 {
		return fmt.Errorf("%w: provider %q has no configured profile (the config in force has no auth profiles)", ErrBadOrder, provider)
	}
	return fmt.Errorf("%w: provider %q has no configured profile (configured providers: %s)", ErrBadOrder, provider, strings.Join(known, ", "))
}

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
	cur, _ = evolveOrder(cur, p)
	return cur
}

// EvolveOrders folds p into m, the stored orders by provider: provider
// key's order becomes [EvolveOrder]'s, and is removed when cleared.
func EvolveOrders(m map[string][]string, key string, p events.Payload) {
	if o := EvolveOrder(m[key], p); o != nil {
		m[key] = o
	} else {
		delete(m, key)
	}
}

// evolveOrder is [EvolveOrder] reporting whether p is a type it knows: one
// case per type of the aggregate in the catalog
// (TestFold_EveryCatalogTypeIsEvolved).
func evolveOrder(cur []string, p events.Payload) ([]string, bool) {
	switch e := p.(type) {
	case events.AuthOrderSet:
		if len(e.ProfileIDs) == 0 {
			return nil, true
		}
		return append([]string(nil), e.ProfileIDs...), true
	}
	return cur, false
}
