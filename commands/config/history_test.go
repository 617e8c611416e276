package config_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/commands/config"
	"sigs.k8s.io/yaml"
)

// Canonical configs of formats 2, 3 and 4 (the current one), as the
// builds that wrote them stored them in ConfigApplied, and their recorded
// hashes.
// If this test fails, a change altered a released format's rendering:
// leave it alone and add a new format.
const (
	canonicalV2 = `{"canonicalVersion":2,"auth":{"profiles":{"openai:me@example.com":{"provider":"openai","type":"oauth","expires":1798761600000}},"cooldowns":{"ladderMs":[30000,60000,300000],"rateLimit":"ladder","rateLimitBaseMs":30000,"rateLimitMaxMs":86400000,"billingBackoffMs":600000,"billingMaxMs":86400000,"authPermanentBackoffMs":600000,"authPermanentMaxMs":3600000,"failureWindowMs":86400000,"resetOnExpiry":false,"inlineKeyBillingMs":600000,"clearOtherModelCooldownOnSuccess":false,"autoPinSurvivesCompaction":false,"rateLimitedProfileRotations":1,"overloadedProfileRotations":1,"neverCooldownProviders":["kilocode","openrouter"]}},"agents":{"defaults":{"model":{"primary":"openai/gpt-5","fallbacks":[]}},"entries":{"coder":{"model":"anthropic/claude-opus-4-6"}}},"retry":{"provider":{"maxRetries":3,"backoffBaseMs":1000,"backoffMaxMs":30000,"windowMs":90000,"rateLimitRetryCap":9,"jitterMin":0.5,"jitterMax":1.5}},"failover":{"skipTtlMs":0,"sdkRetryMaxWaitSeconds":60,"probeThrottleMs":30000,"nearExpiryMarginMs":120000,"transientProbesPerProvider":1,"autoOverrideProbeIntervalMs":300000,"chainOverloadRetry":{"rounds":10,"baseMs":2500,"maxMs":30000,"noticeAfterMs":30000},"loopLimit":{"base":24,"perProfile":8,"min":32,"max":160}}}`
	hashV2      = "sha256:ffca387321323b9537a8a7c403429a4a251bd2cf74f361bc932aaaa2226c9693"
	canonicalV3 = `{"canonicalVersion":3,"auth":{"profiles":{"openai:me@example.com":{"provider":"openai","type":"oauth","expires":1798761600000}},"cooldowns":{"ladderMs":[30000,60000,300000],"rateLimit":"ladder","rateLimitBaseMs":30000,"rateLimitMaxMs":86400000,"billingBackoffMs":600000,"billingMaxMs":86400000,"authPermanentBackoffMs":600000,"authPermanentMaxMs":3600000,"failureWindowMs":86400000,"resetOnExpiry":false,"inlineKeyBillingMs":600000,"clearOtherModelCooldownOnSuccess":false,"autoPinSurvivesCompaction":false,"rateLimitedProfileRotations":1,"overloadedProfileRotations":1,"neverCooldownProviders":["kilocode","openrouter"],"subscriptionBlockMaxMs":604800000}},"agents":{"defaults":{"model":{"primary":"openai/gpt-5","fallbacks":[]}},"entries":{"coder":{"model":"anthropic/claude-opus-4-6"}}},"retry":{"provider":{"maxRetries":3,"backoffBaseMs":1000,"backoffMaxMs":30000,"windowMs":90000,"rateLimitRetryCap":9,"jitterMin":0.5,"jitterMax":1.5,"maxRetryDelayMs":10000}},"failover":{"skipTtlMs":0,"sdkRetryMaxWaitSeconds":60,"probeThrottleMs":30000,"nearExpiryMarginMs":120000,"transientProbesPerProvider":1,"autoOverrideProbeIntervalMs":300000,"chainOverloadRetry":{"rounds":10,"baseMs":2500,"maxMs":30000,"noticeAfterMs":30000},"loopLimit":{"base":24,"perProfile":8,"min":32,"max":160}}}`
	hashV3      = "sha256:0cc4943f6b146d7f35336f6892a861e30b1c060a541b493599860b0745c6b4a4"
	canonicalV4 = `{"canonicalVersion":4,"auth":{"profiles":{"openai:me@example.com":{"provider":"openai","type":"oauth","expires":1798761600000}},"cooldowns":{"ladderMs":[30000,60000,300000],"rateLimit":"ladder","rateLimitBaseMs":30000,"rateLimitMaxMs":86400000,"billingBackoffMs":600000,"billingMaxMs":86400000,"authPermanentBackoffMs":600000,"authPermanentMaxMs":3600000,"failureWindowMs":86400000,"resetOnExpiry":false,"inlineKeyBillingMs":600000,"clearOtherModelCooldownOnSuccess":false,"autoPinSurvivesCompaction":false,"rateLimitedProfileRotations":1,"overloadedProfileRotations":1,"neverCooldownProviders":["kilocode","openrouter"],"subscriptionBlockMaxMs":604800000}},"agents":{"defaults":{"model":{"primary":"openai/gpt-5","fallbacks":[]}},"entries":{"coder":{"model":"anthropic/claude-opus-4-6"}}},"retry":{"provider":{"maxRetries":3,"backoffBaseMs":1000,"backoffMaxMs":30000,"windowMs":90000,"rateLimitRetryCap":9,"jitterMin":0.5,"jitterMax":1.5,"maxRetryDelayMs":10000}},"failover":{"skipTtlMs":0,"sdkRetryMaxWaitSeconds":60,"probeThrottleMs":30000,"nearExpiryMarginMs":120000,"transientProbesPerProvider":1,"autoOverrideProbeIntervalMs":300000,"chainOverloadRetry":{"rounds":10,"baseMs":2500,"maxMs":30000,"noticeAfterMs":30000},"loopLimit":{"base":24,"perProfile":8,"min":32,"max":160},"formatAdvances":false}}`
	hashV4      = "sha256:ea1be52c401f4873cbd34de7b85c29cd5c753c986d1e79fed40c5882043ba5bc"
)

type storedConfig struct {
	Hash   string          `json:"hash"`
	Config json.RawMessage `json:"config"`
	Source string          `json:"source"`
}

// firstReleaseConfigs returns every ConfigApplied payload of the ledger the
// first release wrote (fixtures/ledgers/first-release.jsonl): format 1,
// no canonicalVersion key.
func firstReleaseConfigs(t *testing.T) []storedConfig {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "fixtures", "ledgers", "first-release.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []storedConfig
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for sc.Scan() {
		var m struct {
			Data struct {
				Events []struct {
					Type    string          `json:"type"`
					Payload json.RawMessage `json:"payload"`
				} `json:"events"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		for _, ev := range m.Data.Events {
			if ev.Type != "ConfigApplied" {
				continue
			}
			var c storedConfig
			if err := json.Unmarshal(ev.Payload, &c); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no ConfigApplied in the first-release ledger")
	}
	return out
}

// History survives upgrades: a canonical config of the current format and
// every one the first release stored parse and hash to their recorded
// hashes, each re-rendered byte for byte in its own format.
func TestCanonical_EveryFormatHashesToItsRecordedHash(t *testing.T) {
	l, err := config.Parse([]byte(canonicalV2), "ConfigApplied "+hashV2, config.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if l.Hash != hashV2 || l.Format != 2 || string(l.Canonical) != canonicalV2 {
		t.Fatalf("format 2: hash %s format %d, want %s format 2\n%s", l.Hash, l.Format, hashV2, l.Canonical)
	}
	// Format 2 predates provider resets: it decides as its release did.
	if l.Policy.SubscriptionBlockMaxMs != 0 || l.Policy.MaxRetryDelayMs != 0 {
		t.Fatalf("format 2 reads subscriptionBlockMaxMs %d, maxRetryDelayMs %d; want 0 (off)", l.Policy.SubscriptionBlockMaxMs, l.Policy.MaxRetryDelayMs)
	}
	l3, err := config.Parse([]byte(canonicalV3), "ConfigApplied "+hashV3, config.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if l3.Hash != hashV3 || l3.Format != 3 || string(l3.Canonical) != canonicalV3 {
		t.Fatalf("format 3: hash %s format %d, want %s format 3\n%s", l3.Hash, l3.Format, hashV3, l3.Canonical)
	}
	// Format 3 predates failover.formatAdvances: read as the default,
	// false (only turns of rule revision 2 read it).
	if l3.Policy.FormatAdvances || l.Policy.FormatAdvances {
		t.Fatal("formats 2 and 3 read formatAdvances as true")
	}
	l4, err := config.Parse([]byte(canonicalV4), "ConfigApplied "+hashV4, config.Stored())
	if err != nil {
		t.Fatal(err)
	}
	if l4.Hash != hashV4 || l4.Format != config.CanonicalVersion || string(l4.Canonical) != canonicalV4 {
		t.Fatalf("format 4: hash %s format %d, want %s format 4\n%s", l4.Hash, l4.Format, hashV4, l4.Canonical)
	}
	// The current canonical form read as a file (it carries its version).
	if f, err := config.Parse([]byte(canonicalV4), "copy.json"); err != nil || f.Hash != hashV4 {
		t.Fatalf("format 4 as a file: %v, hash %v", err, f)
	}
	for _, old := range []string{canonicalV2, canonicalV3} {
		if f, err := config.Parse([]byte(old), "copy.json"); !config.IsInvalid(err) {
			t.Fatalf("an older format as a file: %v, %v; want refused", err, f)
		}
	}
	// An unchanged format-3 config is the same config in format 4.
	if !l4.SameAs(hashV3, []byte(canonicalV3)) {
		t.Fatal("format 3 stored config is not the same as its format-4 rendering")
	}
	for _, c := range firstReleaseConfigs(t) {
		if bytes.Contains(c.Config, []byte("canonicalVersion")) {
			t.Fatalf("%s: a first-release config has a canonicalVersion", c.Hash)
		}
		l, err := config.Parse(c.Config, "ConfigApplied "+c.Hash, config.Stored())
		if err != nil {
			t.Fatalf("%s (%s): %v", c.Hash, c.Source, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, c.Config); err != nil {
			t.Fatal(err)
		}
		if l.Hash != c.Hash || l.Format != 1 || l.Canonical == nil || string(l.Canonical) != compact.String() {
			t.Fatalf("%s (%s): format %d re-hashes to %s\n got %s\nwant %s", c.Hash, c.Source, l.Format, l.Hash, l.Canonical, compact.String())
		}
		// Read as a file (the current format), the same text is another
		// canonical form: the stored hash is not the current one.
		if f, err := config.Parse(c.Config, "file"); err != nil || f.Hash == c.Hash {
			t.Fatalf("%s read as a file: %v (hash unchanged: the format change must show)", c.Hash, err)
		}
	}
}

// An unchanged config is not re-applied after an upgrade: the scenario
// file the first release applied hashes differently now, but is the same
// config as the stored format-1 one.
func TestCanonical_SameAsAStoredOlderFormat(t *testing.T) {
	var stored *storedConfig
	for _, c := range firstReleaseConfigs(t) {
		if c.Source == "scenario:incident-day" {
			stored = &c
			break
		}
	}
	if stored == nil {
		t.Fatal("the first-release ledger has no incident-day config")
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Config json.RawMessage `json:"config"`
	}
	if err := yaml.Unmarshal(raw, &sc); err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(sc.Config, &tree); err != nil {
		t.Fatal(err)
	}
	// Format 3 gave two new keys defaults that format 1 did not have (it
	// reads them as off): the unchanged file is now another config, applied
	// once after the upgrade.
	if now := mustParse(t, string(sc.Config)); now.SameAs(stored.Hash, stored.Config) {
		t.Fatalf("incident-day's config (%s) with the format-3 defaults is the same as the stored format-1 one", now.Hash)
	}
	// With those keys at what format 1 meant, it is the same config.
	legacy := map[string]any{}
	for k, v := range tree {
		legacy[k] = v
	}
	auth := map[string]any{}
	for k, v := range tree["auth"].(map[string]any) {
		auth[k] = v
	}
	auth["cooldowns"] = map[string]any{"subscriptionBlockMaxMs": 0}
	legacy["auth"] = auth
	legacy["retry"] = map[string]any{"provider": map[string]any{"maxRetryDelayMs": 0}}
	text, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	now := mustParse(t, string(text))
	if now.Hash == stored.Hash {
		t.Fatal("the current format hashes like format 1: nothing to test")
	}
	if !now.SameAs(stored.Hash, stored.Config) {
		t.Fatalf("incident-day's config (%s) is not the same as the stored format-1 one (%s)", now.Hash, stored.Hash)
	}
	tree["retry"] = map[string]any{"provider": map[string]any{"maxRetries": 7}}
	changed, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	other := mustParse(t, string(changed))
	if other.SameAs(stored.Hash, stored.Config) {
		t.Fatal("a changed config is the same as the stored one")
	}
	if !now.SameAs(now.Hash, now.Canonical) {
		t.Fatal("a config is not the same as itself")
	}
}

// Strictness is for files a user writes, not for stored history: a stored
// config with a key this build does not know or a duration past today's
// bounds (the first release accepted both) still parses, with warnings,
// and keeps its hash; the same text as a file is refused.
func TestCanonical_StoredConfigsAreNotHeldToFileStrictness(t *testing.T) {
	c := firstReleaseConfigs(t)[0]
	var tree map[string]any
	if err := json.Unmarshal(c.Config, &tree); err != nil {
		t.Fatal(err)
	}
	cd := tree["auth"].(map[string]any)["cooldowns"].(map[string]any)
	cd["ladderMs"] = []any{json.Number("9223372036854775807")}
	tree["futureKey"] = true
	text, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	l, err := config.Parse(text, "stored", config.Stored())
	if err != nil {
		t.Fatalf("a stored config is refused: %v", err)
	}
	if len(l.Warnings) != 1 || l.Warnings[0].Path != "futureKey" || l.Format != 1 {
		t.Fatalf("warnings %v, format %d", l.Warnings, l.Format)
	}
	if l.Policy.CooldownLadderMs[0] != 9223372036854775807 {
		t.Fatalf("ladder %v: a stored config decides as it was recorded", l.Policy.CooldownLadderMs)
	}
	_, err = config.Parse(text, "file.json")
	if err == nil || !strings.Contains(err.Error(), "futureKey: unknown key") || !strings.Contains(err.Error(), "ladderMs[0]: 9223372036854775807 is longer than the limit") {
		t.Fatalf("as a file: %v", err)
	}
	if _, err := config.Parse([]byte(`{"canonicalVersion": 5}`), "stored", config.Stored()); !config.IsInvalid(err) {
		t.Fatalf("a format newer than this build parsed: %v", err)
	}
}

// A profile id with a bidirectional override, which builds before the
// rule stored, is read back from a ConfigApplied as it was; the same text
// as a file is refused naming the id.
func TestCanonical_StoredBidiProfileIDStillParses(t *testing.T) {
	text := []byte(strings.Replace(canonicalV4, "openai:me@example.com", "openai:me\u202eexample", 1))
	l, err := config.Parse(text, "stored", config.Stored())
	if err != nil {
		t.Fatalf("a stored config is refused: %v", err)
	}
	if _, ok := l.Policy.Profile("openai:me\u202eexample"); !ok {
		t.Fatalf("profile not read back: %+v", l.Policy.Profiles)
	}
	_, err = config.Parse(text, "file.json")
	if err == nil || !strings.Contains(err.Error(), `auth.profiles["openai:me\u202eexample"]: profile id "openai:me\u202eexample" holds the bidirectional or line-separating character U+202E at byte 9`) {
		t.Fatalf("as a file: %v", err)
	}
}
