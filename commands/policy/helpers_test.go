package policy

import "github.com/fledger/fledger/events"

const t0 = int64(1_736_160_000_000)

func m(provider, model string) ModelRef { return ModelRef{Provider: provider, Model: model} }

func testConfig() Config {
	c := DefaultConfig()
	c.Hash = "sha256:test"
	c.Profiles = []Profile{
		{ID: "anthropic:a", Provider: "anthropic", Type: ProfileOAuth},
		{ID: "anthropic:b", Provider: "anthropic", Type: ProfileAPIKey},
		{ID: "google:inline", Provider: "google", Type: ProfileAPIKey, InlineKey: true},
		{ID: "openai:key", Provider: "openai", Type: ProfileAPIKey},
		{ID: "openai:user", Provider: "openai", Type: ProfileOAuth},
		{ID: "openrouter:default", Provider: "openrouter", Type: ProfileAPIKey},
	}
	c.Defaults = Models{Primary: m("anthropic", "claude"), Fallbacks: []ModelRef{m("openai", "gpt-5"), m("google", "gemini")}}
	return c
}

func prof(c Config, id string) Profile {
	p, ok := c.Profile(id)
	if !ok {
		panic("no profile " + id)
	}
	return p
}

// fail records one failure and folds it, returning the event too.
func fail(p Params, s ProfileState, pr Profile, reason, model string, now int64) (ProfileState, events.ProfileFailureRecorded, bool) {
	e, ok := p.RecordFailure(s, pr, Failure{Reason: reason, Model: model}, now)
	if ok {
		s = EvolveProfile(s, e)
	}
	return s, e, ok
}
