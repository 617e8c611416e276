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

// ---- order (reference §5; seed 000 "Rotation order") ----

func TestOrder_ReferenceCases(t *testing.T) {
	cool := func(until int64) ProfileState { return ProfileState{CooldownUntil: until, CooldownReason: ReasonAuth} }
	cases := []struct {
		name   string
		cfgOrd map[string][]string
		in     OrderInput
		want   []string
	}{
		{"explicit order kept; cooling profiles to the end by soonest expiry, not list position",
			map[string][]string{"p": {"p:api1", "p:token", "p:api2", "p:oauth-ok"}},
			OrderInput{States: map[string]ProfileState{"p:api1": cool(t0 + 9000), "p:token": cool(t0 + 3000)}},
			[]string{"p:api2", "p:oauth-ok", "p:token", "p:api1"}},
		{"explicit order ignores type and lastUsed",
			map[string][]string{"p": {"p:api2", "p:api1", "p:oauth-ok"}},
			OrderInput{States: map[string]ProfileState{"p:api2": {LastUsed: 99}, "p:api1": {LastUsed: 1}}},
			[]string{"p:api2", "p:api1", "p:oauth-ok"}},
		{"explicit order: pinned profile first", map[string][]string{"p": {"p:api2", "p:api1", "p:oauth-ok"}},
			OrderInput{Preferred: "p:oauth-ok"}, []string{"p:oauth-ok", "p:api2", "p:api1"}},
		{"implicit: oauth < token < api_key, expired OAuth after usable OAuth", nil, OrderInput{},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api1", "p:api2"}},
		{"implicit: lastUsed ascending inside a tier", nil,
			OrderInput{States: map[string]ProfileState{"p:api1": {LastUsed: t0 - 1}, "p:api2": {LastUsed: t0 - 2}}},
			[]string{"p:oauth-ok", "p:oauth-expired", "p:token", "p:api2", "p:api1"}},
		{"implicit: disabled and cooling last by soonest expiry", nil,
			OrderInput{States: map[string]ProfileState{"p:oauth-ok": {DisabledUntil: t0 + 2, DisabledReason: ReasonBilling}, "p:api1": cool(t0 + 1)}},
			[]string{"p:oauth-expired", "p:token", "p:api2", "p:api1", "p:oauth-ok"}},
		{"implicit: pinned profile first", nil, OrderInput{Preferred: "p:api1"},
			[]string{"p:api1", "p:oauth-ok", "p:oauth-expired", "p:token", "p:api2"}},
		{"an OAuth profile expiring exactly now counts as expired", nil,
			OrderInput{Now: t0 + 3600000}, []string{"p:oauth-expired", "p:oauth-ok", "p:token", "p:api1", "p:api2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := orderConfig()
			c.Order = tc.cfgOrd
			in := tc.in
			in.Provider = "p"
			if in.Now == 0 {
				in.Now = t0
			}
			if got := c.ResolveOrder(in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// A user-locked profile is prepended while eligible (reference §7 step 3),
// replaced by the next eligible one while it cools, and never overwritten
// by the auto pin.
func TestOrder_UserLockedProfilePrepended(t *testing.T) {
	cfg := testConfig()
	cfg.Order = map[string][]string{"openai": {"openai:user", "openai:key"}}
	h := newHarness(t, cfg)
	h.sess.Pin, h.sess.PinProvider, h.sess.PinSource = "openai:key", "openai", PinUser
	h.sess.Model, h.sess.Source = m("openai", "gpt-5"), SourceUser
	wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5", "openai:key", KindFirst)
	h.profiles["openai:key"] = ProfileState{CooldownUntil: t0 + 1000, CooldownReason: ReasonRateLimit, CooldownModel: "gpt-5"}
	wantCall(t, h.start(h.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFirst)
	h.outcome(Outcome{OK: true})
	if h.sess.Pin != "openai:key" || h.sess.PinSource != PinUser {
		t.Fatalf("%+v", h.sess)
	}
	// An auto pin rotates to the profile that answered.
	h2 := newHarness(t, cfg)
	h2.sess.Pin, h2.sess.PinProvider, h2.sess.PinSource = "openai:key", "openai", PinAuto
	h2.sess.Model, h2.sess.Source = m("openai", "gpt-5"), SourceUser
	h2.profiles["openai:key"] = ProfileState{DisabledUntil: t0 + 1000, DisabledReason: ReasonBilling}
	wantCall(t, h2.start(h2.selectDefault(), "direct"), "openai", "gpt-5", "openai:user", KindFirst)
	h2.outcome(Outcome{OK: true})
	if h2.sess.Pin != "openai:user" || h2.sess.PinSource != PinAuto {
		t.Fatalf("%+v", h2.sess)
	}
}

// Revision 4: a user pin of a profile the explicit order does not list is
// tried first while eligible (reference §7 step 3: an eligible user-locked
// profile is prepended); revision 3 never tried it; an auto pin outside
// the order is not; a user pin in cooldown yields to the order.
func TestOrder_UserPinOutsideTheExplicitOrder(t *testing.T) {
	for _, c := range []struct {
		name    string
		rules   Rules
		source  PinSource
		cooling bool
		want    string
	}{
		{"revision 4, user pin", RulesV4, PinUser, false, "openai:key"},
		{"revision 3, user pin", RulesV3, PinUser, false, "openai:user"},
		{"revision 4, auto pin", RulesV4, PinAuto, false, "openai:user"},
		{"revision 4, user pin cooling", RulesV4, PinUser, true, "openai:user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Order = map[string][]string{"openai": {"openai:user"}}
			h := newHarness(t, cfg)
			h.sess.Pin, h.sess.PinProvider, h.sess.PinSource = "openai:key", "openai", c.source
			h.sess.Model, h.sess.Source = m("openai", "gpt-5"), SourceUser
			if c.cooling {
				h.profiles["openai:key"] = ProfileState{CooldownUntil: t0 + 1000, CooldownReason: ReasonRateLimit}
			}
			n := h.apply(StartTurn(h.selectDefault(), h.env(), StartInput{TurnID: "turn-1", Session: "s1", Chat: "direct", Seed: 42, Rules: c.rules}))
			wantCall(t, n, "openai", "gpt-5", c.want, KindFirst)
		})
	}
}
