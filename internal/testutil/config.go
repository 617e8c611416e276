package testutil

// TwoProviderConfig is the engine's and serve's usual configuration, as a
// user writes it (parse it with config.Parse): anthropic primary with two
// profiles (anthropic:a before anthropic:b), openai fallback with one.
const TwoProviderConfig = `
auth:
  profiles:
    "anthropic:a": {provider: anthropic, type: api_key}
    "anthropic:b": {provider: anthropic, type: api_key}
    "openai:a": {provider: openai, type: api_key}
  order:
    anthropic: ["anthropic:a", "anthropic:b"]
agents:
  defaults:
    model:
      primary: anthropic/claude-opus-4-6
      fallbacks: [openai/gpt-5]
`
