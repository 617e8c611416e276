package policy

import (
	"reflect"
	"testing"
)

func orderConfig() Config {
	c := DefaultConfig()
	c.Profiles = []Profile{
		{ID: "p:api1", Provider: "p", Type: ProfileAPIKey},
		{ID: "p:api2", Provider: "p", Type: ProfileAPIKey},
		{ID: "p:oauth-expired", Provider: "p", Type: ProfileOAuth, ExpiresAt: t0 - 1},
		{ID: "p:oauth-ok", Provider: "p", Type: ProfileOAuth, ExpiresAt: t0 + 3600000},
		{ID: "p:token", Provider: "p", Type: ProfileToken},
		{ID: "q:other", Provider: "q", Type: ProfileAPIKey},
	}
	return c
}

func TestOrder_Table(t *testing.T) {
	cool := func(until int64) ProfileState { return ProfileState{CooldownUntil: until, CooldownReason: ReasonAuth} }
	cases := []struct {
		name   string
		cfgOrd map[string][]string
		in     OrderInput
		want   []string
	}{
		{"type tiers: oauth (usable before expired), token, api_key; then lastUsed", nil,
			OrderInput{States: map[string]ProfileState{"p:api1": {LastUsed: 20}, "p:api2": {LastUsed: 10}}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api2", "p:api1"}},
		{"lastUsed oldest first, missing = 0", nil,
			OrderInput{States: map[string]ProfileState{"p:oauth-ok": {LastUsed: 5}}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"cooling profiles last by soonest expiry", nil,
			OrderInput{States: map[string]ProfileState{"p:oauth-ok": cool(t0 + 9000), "p:token": cool(t0 + 3000), "p:api1": {DisabledUntil: t0 + 5000, DisabledReason: ReasonBilling}}},
			[]string{"p:oauth-expired", "p:api2", "p:token", "p:api1", "p:oauth-ok"}},
		{"auth.order kept, cooling moved to end", map[string][]string{"p": {"p:api2", "p:token", "p:api1"}},
			OrderInput{States: map[string]ProfileState{"p:api2": cool(t0 + 1000)}},
			[]string{"p:token", "p:api1", "p:api2"}},
		{"stored override beats auth.order", map[string][]string{"p": {"p:api2"}},
			OrderInput{StoredOrder: []string{"p:api1", "p:api2"}}, []string{"p:api1", "p:api2"}},
		{"explicit list of unknown ids falls back to configured", map[string][]string{"p": {"p:gone"}},
			OrderInput{}, []string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"other provider's ids and duplicates dropped", map[string][]string{"p": {"p:api1", "q:other", "p:api1"}},
			OrderInput{}, []string{"p:api1"}},
		{"preferred moves to front while usable", nil,
			OrderInput{Preferred: "p:api2"}, []string{"p:api2", "p:oauth-ok", "p:oauth-expired", "p:token", "p:api1"}},
		{"preferred in cooldown stays among cooling", nil,
			OrderInput{Preferred: "p:api2", States: map[string]ProfileState{"p:api2": cool(t0 + 1)}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"model-scoped cooldown on another model does not demote", nil,
			OrderInput{Model: "m2", States: map[string]ProfileState{"p:oauth-ok": {CooldownUntil: t0 + 1, CooldownReason: ReasonRateLimit, CooldownModel: "m1"}}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"model-scoped cooldown on this model demotes", nil,
			OrderInput{Model: "m1", States: map[string]ProfileState{"p:oauth-ok": {CooldownUntil: t0 + 1, CooldownReason: ReasonRateLimit, CooldownModel: "m1"}}},
			[]string{"p:oauth-expired", "p:token", "p:api1", "p:api2", "p:oauth-ok"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := orderConfig()
			c.Order = tc.cfgOrd
			in := tc.in
			if in.Provider == "" {
				in.Provider = "p"
			}
			in.Now = t0
			if got := c.ResolveOrder(in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}
