package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

func mustParse(t *testing.T, text string) *config.Loaded {
	t.Helper()
	l, err := config.Parse([]byte(text), "test.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return l
}

func problems(t *testing.T, text string) []string {
	t.Helper()
	_, err := config.Parse([]byte(text), "test.yaml")
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse(%q) = %v, want a *ValidationError", text, err)
	}
	if !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("error does not wrap ErrInvalid: %v", err)
	}
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	return out
}

// wantProblems fails t unless parsing text gives exactly want.
func wantProblems(t *testing.T, text string, want []string) {
	t.Helper()
	if got := problems(t, text); !reflect.DeepEqual(got, want) {
		t.Fatalf("problems\n got %q\nwant %q", got, want)
	}
}

func TestDefault_IsPolicyDefaults(t *testing.T) {
	l := config.Default()
	if !reflect.DeepEqual(l.Policy.Params, policy.DefaultParams()) {
		t.Fatalf("default params differ:\n got %+v\nwant %+v", l.Policy.Params, policy.DefaultParams())
	}
	if !strings.HasPrefix(l.Hash, "sha256:") || len(l.Hash) != len("sha256:")+64 {
		t.Fatalf("hash %q is not sha256:<64 hex>", l.Hash)
	}
	if l.Policy.Hash != l.Hash {
		t.Fatalf("Policy.Hash %q != Hash %q", l.Policy.Hash, l.Hash)
	}
}

func TestParse_ExampleFixture(t *testing.T) {
	l, err := config.LoadFile(filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 0 {
		t.Fatalf("warnings: %v", l.Warnings)
	}
	c := l.Policy
	wantIDs := []string{"anthropic:personal", "anthropic:work", "groq:default", "openai:api-key-backup", "openai:user@example.com"}
	var ids []string
	for _, p := range c.Profiles {
		ids = append(ids, p.ID)
	}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Fatalf("profiles %v, want %v", ids, wantIDs)
	}
	p, _ := c.Profile("openai:user@example.com")
	if p.ExpiresAt != 1798761600000 || p.Type != "oauth" || p.Provider != "openai" {
		t.Fatalf("openai oauth profile = %+v", p)
	}
	if g, _ := c.Profile("groq:default"); !g.InlineKey {
		t.Fatalf("groq:default should be an inline key")
	}
	if got := c.Order["openai"]; !reflect.DeepEqual(got, []string{"openai:user@example.com", "openai:api-key-backup"}) {
		t.Fatalf("order %v", got)
	}
	wantDefaults := policy.Models{
		Primary:   events.ModelRef{Provider: "anthropic", Model: "claude-opus-4-6"},
		Fallbacks: []events.ModelRef{{Provider: "openai", Model: "gpt-5"}, {Provider: "groq", Model: "llama-3.3-70b-versatile"}},
	}
	if !reflect.DeepEqual(c.Defaults, wantDefaults) {
		t.Fatalf("defaults %+v", c.Defaults)
	}
	if a := c.Agents["coder"]; a.HasFallbacks || a.Primary.String() != "openai/gpt-5" {
		t.Fatalf("coder %+v: a string model is a strict agent primary", a)
	}
	if a := c.Agents["helper"]; !a.HasFallbacks || len(a.Fallbacks) != 1 || a.Fallbacks[0].String() != "openai/gpt-5-mini" {
		t.Fatalf("helper %+v", a)
	}
}

func TestParse_OpenClawSwitches(t *testing.T) {
	l, err := config.LoadFile(filepath.Join("..", "..", "fixtures", "configs", "openclaw-2026.9.6.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := l.Policy.Params
	if p.RateLimitMode != "exponential" || !p.ResetOnExpiry || !p.ClearOtherModelCooldownOnSuccess || !p.AutoPinSurvivesCompaction || p.MaxRetries != 8 || p.ChainOverloadRounds != 0 || !p.FormatAdvances {
		t.Fatalf("switches not applied: %+v", p)
	}
}

func TestParse_CanonicalRoundTrip(t *testing.T) {
	for _, name := range []string{"example.yaml", "openclaw-2026.9.6.yaml"} {
		l, err := config.LoadFile(filepath.Join("..", "..", "fixtures", "configs", name))
		if err != nil {
			t.Fatal(err)
		}
		again, err := config.Parse(l.Canonical, "canonical")
		if err != nil {
			t.Fatalf("%s: canonical form does not parse: %v\n%s", name, err, l.Canonical)
		}
		if again.Hash != l.Hash || string(again.Canonical) != string(l.Canonical) {
			t.Fatalf("%s: canonical round trip changed the hash: %s vs %s", name, l.Hash, again.Hash)
		}
		if !reflect.DeepEqual(again.Policy, l.Policy) {
			t.Fatalf("%s: canonical round trip changed the policy:\n%+v\n%+v", name, again.Policy, l.Policy)
		}
	}
}

func TestHash_IgnoresLayoutAndSpelledOutDefaults(t *testing.T) {
	a := mustParse(t, "agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-opus-4-6]}}}")
	b := mustParse(t, `{"retry": {"provider": {"maxRetries": 3}},
  "agents": {"defaults": {"model": {"fallbacks": ["anthropic/claude-opus-4-6"], "primary": "openai/gpt-5"}}},
  "auth": {"cooldowns": {"rateLimit": "ladder", "billingBackoffHours": 0.16666666666666666}}}`)
	if a.Hash != b.Hash {
		t.Fatalf("same meaning, different hashes: %s vs %s", a.Hash, b.Hash)
	}
	c := mustParse(t, "agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude-opus-4-6]}}}\nretry: {provider: {maxRetries: 2}}")
	if c.Hash == a.Hash {
		t.Fatalf("different maxRetries, same hash")
	}
}

func TestParse_OpenClawHourAliases(t *testing.T) {
	l := mustParse(t, "auth: {cooldowns: {billingBackoffHours: 5, billingMaxHours: 24, failureWindowHours: 12}}")
	p := l.Policy.Params
	if p.BillingBaseMs != 18000000 || p.BillingMaxMs != 86400000 || p.FailureWindowMs != 43200000 {
		t.Fatalf("hours not converted: billing %d/%d window %d", p.BillingBaseMs, p.BillingMaxMs, p.FailureWindowMs)
	}
}

func TestParse_Errors(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"fallback not provider/model",
			"agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [anthropic/claude, openai/gpt-5-mini, gpt]}}}",
			[]string{`agents.defaults.model.fallbacks[2]: "gpt" is not provider/model`}},
		{"primary missing", "agents: {defaults: {model: {fallbacks: [openai/gpt-5]}}}",
			[]string{"agents.defaults.model.primary: is required (provider/model)"}},
		{"agent model wrong shape", "agents: {entries: {coder: {model: [openai/gpt-5]}}}",
			[]string{"agents.entries.coder.model: must be a provider/model string or {primary, fallbacks}: json: cannot unmarshal array into Go value of type config.ModelSpec"}},
		{"bad profile type", `auth: {profiles: {"openai:me@example.com": {provider: openai, type: password}}}`,
			[]string{`auth.profiles["openai:me@example.com"].type: "password" is not oauth, token or api_key`}},
		{"wildcard profile id", `auth: {profiles: {"openai:*": {provider: openai, type: oauth}}}`,
			[]string{`auth.profiles["openai:*"]: profile id "openai:*" contains a wildcard (* or >); name one profile id exactly`}},
		{"whitespace profile id", "auth: {profiles: {\"openai:a b\": {provider: openai, type: oauth}}}",
			[]string{`auth.profiles["openai:a b"]: profile id "openai:a b" contains whitespace or control characters`}},
		{"wildcard provider", "agents: {defaults: {model: {primary: \"*/>\"}}}",
			[]string{`agents.defaults.model.primary: provider "*" contains a wildcard (* or >); name one provider exactly`}},
		{"wildcard model", "agents: {defaults: {model: {primary: openai/gpt-5, fallbacks: [\"openai/gpt-*\"]}}}",
			[]string{`agents.defaults.model.fallbacks[0]: model "gpt-*" contains a wildcard (* or >); name one model exactly`}},
		{"model ending in @", "agents: {defaults: {model: {primary: \"vertex/claude-3-5-sonnet@\"}}}",
			[]string{`agents.defaults.model.primary: model "claude-3-5-sonnet@" ends in @; name the model exactly (an @ inside it is fine)`}},
		{"white space in a model", "agents: {defaults: {model: {primary: \"lmstudio/My Model.gguf\"}}}",
			[]string{`agents.defaults.model.primary: "lmstudio/My Model.gguf" is not provider/model: it contains white space`}},
		{"control character in a model", "agents: {defaults: {model: {primary: \"openai/gpt\\e[2J\"}}}",
			[]string{`agents.defaults.model.primary: model "gpt\x1b[2J" contains whitespace or control characters`}},
		{"order names unknown profile", `auth: {profiles: {"openai:a": {provider: openai, type: oauth}}, order: {openai: ["openai:a", "openai:b"]}}`,
			[]string{`auth.order.openai[1]: "openai:b" is not a profile in auth.profiles`}},
		{"order names other provider's profile", `auth: {profiles: {"anthropic:a": {provider: anthropic, type: oauth}}, order: {openai: ["anthropic:a"]}}`,
			[]string{`auth.order.openai[0]: "anthropic:a" belongs to provider "anthropic", not "openai"`}},
		{"wrong kind", "auth: {cooldowns: {ladderMs: [30000, x]}}",
			[]string{`auth.cooldowns.ladderMs[1]: expected a whole number, got the string "x"`}},
		{"ladder not increasing", "auth: {cooldowns: {ladderMs: [60000, 30000]}}",
			[]string{"auth.cooldowns.ladderMs[1]: 30000 is shorter than the step before it"}},
		{"bad rate limit mode", "auth: {cooldowns: {rateLimit: linear}}",
			[]string{`auth.cooldowns.rateLimit: "linear" is not ladder or exponential`}},
		{"negative retries", "retry: {provider: {maxRetries: -1}}",
			[]string{"retry.provider.maxRetries: -1 is negative"}},
		{"both ms and hours", "auth: {cooldowns: {billingBackoffMs: 1000, billingBackoffHours: 1}}",
			[]string{"auth.cooldowns.billingBackoffHours: give billingBackoffMs or billingBackoffHours, not both"}},
		{"bad expiry", `auth: {profiles: {"openai:a": {provider: openai, type: oauth, expires: tomorrow}}}`,
			[]string{`auth.profiles["openai:a"].expires: "tomorrow" is not an RFC 3339 time (e.g. 2026-12-01T00:00:00Z) or Unix milliseconds`}},
		{"expiry beyond 2^53-1 ms", `auth: {profiles: {"openai:a": {provider: openai, type: oauth, expires: 9007199254740992}}}`,
			[]string{`auth.profiles["openai:a"].expires: 9007199254740992 Unix milliseconds is beyond 9007199254740991 (2^53 − 1, the year 287396)`}},
		{"top level not a mapping", "[1, 2]", []string{"the top level must be a mapping, got a list"}},
		{"overflowing ladder step", "auth: {cooldowns: {ladderMs: [30000, 9223372036854775807]}}",
			[]string{"auth.cooldowns.ladderMs[1]: 9223372036854775807 is longer than the limit of 31622400000 ms (366 days)"}},
		{"overflowing billing window", "auth: {cooldowns: {billingBackoffMs: 600000, billingMaxMs: 9223372036854775807}}",
			[]string{"auth.cooldowns.billingMaxMs: 9223372036854775807 is longer than the limit of 31622400000 ms (366 days)"}},
		{"duration one past the limit", "failover: {probeThrottleMs: 31622400001}",
			[]string{"failover.probeThrottleMs: 31622400001 is longer than the limit of 31622400000 ms (366 days)"}},
		{"seconds past the limit", "failover: {sdkRetryMaxWaitSeconds: 31622401}",
			[]string{"failover.sdkRetryMaxWaitSeconds: 31622401 is longer than the limit of 31622400 seconds (366 days)"}},
		{"count past the limit", "failover: {chainOverloadRetry: {rounds: 1000000}}",
			[]string{"failover.chainOverloadRetry.rounds: 1000000 is more than the limit of 1000"}},
		{"loop limit past the limit", "failover: {loopLimit: {max: 9223372036854775807}}",
			[]string{"failover.loopLimit.max: 9223372036854775807 is more than the limit of 1000"}},
		{"jitter past the limit", "retry: {provider: {jitterMax: 1e9}}",
			[]string{"retry.provider.jitterMax: 1e+09 is more than the limit of 10"}},
		{"older canonical format in a file", "canonicalVersion: 1",
			[]string{"canonicalVersion: format 1 is read only from stored ConfigApplied events; a file is in format 4 (or leave the key out)"}},
		{"format 2 in a file", "canonicalVersion: 2",
			[]string{"canonicalVersion: format 2 is read only from stored ConfigApplied events; a file is in format 4 (or leave the key out)"}},
		{"format 3 in a file", "canonicalVersion: 3",
			[]string{"canonicalVersion: format 3 is read only from stored ConfigApplied events; a file is in format 4 (or leave the key out)"}},
		{"newer canonical format", "canonicalVersion: 5",
			[]string{"canonicalVersion: 5 is newer than this build's canonical format 4; upgrade fledger"}},
		{"key given twice (YAML)", "agents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n      primary: anthropic/claude-opus-4-6\n",
			[]string{"not valid YAML or JSON: yaml: unmarshal errors:\n  line 5: key \"primary\" already set in map"}},
		{"key given twice (JSON)", `{"agents": {"defaults": {"model": {"primary": "openai/gpt-5", "primary": "x/y"}}}}`,
			[]string{"not valid YAML or JSON: yaml: unmarshal errors:\n  line 1: key \"primary\" already set in map"}},
		{"hours under a millisecond", "auth: {cooldowns: {billingBackoffHours: 0.0000001}}",
			[]string{"auth.cooldowns.billingBackoffHours: 1e-07 hours is under a millisecond"}},
		{"several problems at once", "auth: {cooldowns: {rateLimit: x}}\nretry: {provider: {maxRetries: -2}}",
			[]string{`auth.cooldowns.rateLimit: "x" is not ladder or exponential`, "retry.provider.maxRetries: -2 is negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problems(t, tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParse_SyntaxErrorNamesTheLine(t *testing.T) {
	_, err := config.Parse([]byte("auth:\n  profiles: {\n"), "broken.yaml")
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") || !strings.Contains(err.Error(), "line") {
		t.Fatalf("want an error naming the file and line, got %v", err)
	}
}

// Configs are strict: an unknown key is an error naming its path, with the
// key it probably meant.
func TestParse_UnknownKeysAreErrors(t *testing.T) {
	got := problems(t, "agents: {defaults: {model: {primary: anthropic/claude-opus-4-6, fallbaks: [openai/gpt-5]}}}\nauth: {cooldowns: {resetOnExpry: true, ratelimit: exponential, bogus: 1}}\nextra: true")
	want := []string{
		`agents.defaults.model.fallbaks: unknown key; did you mean "fallbacks"?`,
		"auth.cooldowns.bogus: unknown key",
		`auth.cooldowns.ratelimit: unknown key; did you mean "rateLimit"?`,
		`auth.cooldowns.resetOnExpry: unknown key; did you mean "resetOnExpiry"?`,
		"extra: unknown key",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("problems\n got %q\nwant %q", got, want)
	}
}

// The opt-out (forward compatibility): unknown keys are warnings and do
// not take effect.
func TestParse_AllowUnknownKeysKeepsWarnings(t *testing.T) {
	l, err := config.Parse([]byte("auth: {cooldowns: {ratelimit: exponential, bogus: 1}}\nextra: true"), "test.yaml", config.AllowUnknownKeys())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range l.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		"auth.cooldowns.bogus: unknown key (ignored)",
		`auth.cooldowns.ratelimit: unknown key (ignored); did you mean "rateLimit"?`,
		"extra: unknown key (ignored)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings\n got %q\nwant %q", got, want)
	}
	if l.Policy.RateLimitMode != "ladder" {
		t.Fatalf("a misspelt key must not take effect")
	}
}

func TestParse_ProfileIDsWithDotsAreFine(t *testing.T) {
	l := mustParse(t, `auth: {profiles: {"openai:first.last@example.co.uk": {provider: openai, type: oauth}}}`)
	if _, ok := l.Policy.Profile("openai:first.last@example.co.uk"); !ok {
		t.Fatal("profile with dots missing")
	}
}

func TestLoadFile_Oversize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("# "+strings.Repeat("x", config.MaxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.LoadFile(path)
	if !config.IsInvalid(err) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("want an oversize error, got %v", err)
	}
}

func TestLoadFile_Missing(t *testing.T) {
	_, err := config.LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("want ErrNotExist, got %v", err)
	}
}

// TestParse_FallbacksBounded: a fallbacks list longer than MaxFallbacks
// is refused naming its key when a config is checked or applied; the same
// text stored on the stream still parses (history reads as it was).
func TestParse_FallbacksBounded(t *testing.T) {
	refs := make([]string, config.MaxFallbacks+1)
	for i := range refs {
		refs[i] = fmt.Sprintf("openai/gpt-%d", i)
	}
	text := "agents: {defaults: {model: {primary: anthropic/claude-opus-4-6, fallbacks: [" + strings.Join(refs, ", ") + "]}}}"
	got := problems(t, text)
	want := []string{"agents.defaults.model.fallbacks: lists 257 models; the limit is 256"}
	if !slices.Equal(got, want) {
		t.Fatalf("problems %q, want %q", got, want)
	}
	l, err := config.Parse([]byte(text), "ConfigApplied x", config.Stored())
	if err != nil {
		t.Fatalf("stored config: %v", err)
	}
	if n := len(l.Policy.Defaults.Fallbacks); n != config.MaxFallbacks+1 {
		t.Fatalf("stored config has %d fallbacks, want %d", n, config.MaxFallbacks+1)
	}
	mustParse(t, "agents: {defaults: {model: {primary: anthropic/claude-opus-4-6, fallbacks: ["+strings.Join(refs[:config.MaxFallbacks], ", ")+"]}}}")
}
