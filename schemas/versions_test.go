package schemas_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/schemas"
)

// Version 2 of AttemptFailed, ProfileFailureRecorded and ProfileSucceeded
// (issue 17) adds only optional fields: a payload with them validates
// against v2 and is refused by v1 (whose schema knows no such field),
// and a payload without them validates against both.
func TestSchemas_V2AddsTheBlockFields(t *testing.T) {
	v := schemas.NewValidator()
	reset := &events.ProviderReset{At: t0.UnixMilli() + 86400000, Source: "codex_rate_limits", Field: "message", Match: "resets_in_seconds=86400"}
	cases := []events.Payload{
		events.AttemptFailed{TurnID: "t", Attempt: 1, Provider: "openai", Model: "gpt-5", Reason: "rate_limit", Disposition: "failover",
			Evidence: events.Evidence{Rule: "status.429"}, Reset: reset,
			LongWindow: &events.UsageWindow{Kind: "subscription", Field: "code", Match: "usage_limit_reached"}},
		events.ProfileFailureRecorded{ProfileID: "openai:me", Provider: "openai", Reason: "rate_limit", ErrorCount: 1,
			FailureCounts: map[string]int{"rate_limit": 1}, LastFailureAt: t0.UnixMilli(),
			BlockedUntil: reset.At, BlockedReason: "subscription_limit", BlockedSource: "codex_rate_limits", BlockedModel: "gpt-5", Reset: reset},
		events.ProfileSucceeded{ProfileID: "openai:me", Provider: "openai", Model: "gpt-5-mini", LastUsed: t0.UnixMilli(),
			KeptBlockedUntil: reset.At, KeptBlockedReason: "subscription_limit", KeptBlockedSource: "codex_rate_limits", KeptBlockedModel: "gpt-5"},
	}
	reg := events.NewCatalogRegistry()
	for _, p := range cases {
		// AttemptFailed is at 3 since issue 23 (tool_batch_settled,
		// TestSchemas_AttemptFailedV3AddsToolBatchSettled).
		if cur, _ := reg.Version(p.EventType()); cur != 2 && !(p.EventType() == "AttemptFailed" && cur == 3) {
			t.Fatalf("%s is at version %d, want 2", p.EventType(), cur)
		}
		body := encoded(t, p)
		if err := v.ValidatePayload(p.EventType(), 2, body); err != nil {
			t.Errorf("%s v2: %v", p.EventType(), err)
		}
		if err := v.ValidatePayload(p.EventType(), 1, body); err == nil || !strings.Contains(err.Error(), "v1") {
			t.Errorf("%s v1 accepted the v2 fields: %v", p.EventType(), err)
		}
	}
	bad := strings.Replace(string(encoded(t, cases[1])), `"subscription_limit"`, `"weekly"`, 1)
	if err := v.ValidatePayload("ProfileFailureRecorded", 2, []byte(bad)); err == nil {
		t.Error("blocked_reason weekly accepted")
	}
}

// Version 3 of AttemptFailed (issue 23) adds only the optional
// tool_batch_settled: a failure with it validates against v3 and is
// refused by v2, and one without it validates against v1, v2 and v3.
func TestSchemas_AttemptFailedV3AddsToolBatchSettled(t *testing.T) {
	v := schemas.NewValidator()
	af := events.AttemptFailed{TurnID: "t", Attempt: 1, Provider: "anthropic", Model: "claude-opus-4-6", Reason: "timeout", Disposition: "failover",
		Evidence: events.Evidence{Rule: "code.ECONNRESET"}, Error: events.ProviderErrorRecord{Code: "ECONNRESET", MessagePreview: "read ECONNRESET"}}
	if cur, _ := events.NewCatalogRegistry().Version("AttemptFailed"); cur != 3 {
		t.Fatalf("AttemptFailed is at version %d, want 3", cur)
	}
	for ver := 1; ver <= 3; ver++ {
		if err := v.ValidatePayload("AttemptFailed", ver, encoded(t, af)); err != nil {
			t.Errorf("without tool_batch_settled, v%d: %v", ver, err)
		}
	}
	af.ToolBatchSettled = true
	body := encoded(t, af)
	if err := v.ValidatePayload("AttemptFailed", 3, body); err != nil {
		t.Errorf("v3: %v", err)
	}
	if err := v.ValidatePayload("AttemptFailed", 2, body); err == nil || !strings.Contains(err.Error(), "v2") {
		t.Errorf("v2 accepted tool_batch_settled: %v", err)
	}
}

// Version 2 of TurnStarted (issue 22) adds only the optional rule
// revision: a turn with rules validates against v2 and is refused by v1,
// and a turn without it (revision 1, every earlier build) validates
// against both. (Both stored the seed as a JSON number; v3 writes a
// string, TestSchemas_SeedsAreDecimalStrings.)
func TestSchemas_TurnStartedV2AddsTheRuleRevision(t *testing.T) {
	v := schemas.NewValidator()
	ts := events.TurnStarted{TurnID: "t", Session: "s", Chat: "direct", Requested: events.ModelRef{Provider: "openai", Model: "gpt-5"},
		SelectionSource: "default", Chain: []events.Candidate{{Provider: "openai", Model: "gpt-5", RouteOrigin: "requested"}},
		ConfigHash: "sha256:c", AttemptLimit: 32, Seed: 7, StartedAt: t0.UnixMilli()}
	old := numericSeed(t, encoded(t, ts), "seed")
	for _, version := range []int{1, 2} {
		if err := v.ValidatePayload("TurnStarted", version, old); err != nil {
			t.Errorf("revision 1 turn, v%d: %v", version, err)
		}
	}
	ts.Rules = 2
	body := numericSeed(t, encoded(t, ts), "seed")
	if err := v.ValidatePayload("TurnStarted", 2, body); err != nil {
		t.Errorf("v2: %v", err)
	}
	if err := v.ValidatePayload("TurnStarted", 1, body); err == nil {
		t.Error("v1 accepted rules")
	}
}

// numericSeed is body with field's decimal string written as the JSON
// number the versions before issue 19 stored.
func numericSeed(t *testing.T, body []byte, field string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	q := string(m[field])
	out := strings.Replace(string(body), `"`+field+`":`+q, `"`+field+`":`+strings.Trim(q, `"`), 1)
	if out == string(body) {
		t.Fatalf("%s holds no string %s", body, field)
	}
	return []byte(out)
}

// TurnStarted v3 and RetryScheduled v2 (issue 19) write the seeds as
// decimal strings: the current versions accept exactly the strings of a
// uint64 and refuse a number; the earlier ones accept only the number.
func TestSchemas_SeedsAreDecimalStrings(t *testing.T) {
	v := schemas.NewValidator()
	reg := events.NewCatalogRegistry()
	for _, c := range []struct {
		p           events.Payload
		field       string
		cur, before int
	}{
		{events.Examples()[11], "seed", 3, 2},
		{events.Examples()[15], "jitter_seed", 2, 1},
	} {
		typ := c.p.EventType()
		if cur, _ := reg.Version(typ); cur != c.cur {
			t.Fatalf("%s is at version %d, want %d", typ, cur, c.cur)
		}
		body := string(encoded(t, c.p))
		if err := v.ValidatePayload(typ, c.cur, []byte(body)); err != nil {
			t.Errorf("%s v%d: %v", typ, c.cur, err)
		}
		number := numericSeed(t, []byte(body), c.field)
		if err := v.ValidatePayload(typ, c.before, number); err != nil {
			t.Errorf("%s v%d with a number: %v", typ, c.before, err)
		}
		var fe *schemas.FieldError
		if err := v.ValidatePayload(typ, c.cur, number); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s v%d accepted a number: %v", typ, c.cur, err)
		}
		if err := v.ValidatePayload(typ, c.before, []byte(body)); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s v%d accepted a string: %v", typ, c.before, err)
		}
		var m map[string]json.RawMessage
		testutil.NoError(t, json.Unmarshal([]byte(body), &m))
		for s, ok := range map[string]bool{
			`"0"`: true, `"9007199254740993"`: true, `"18446744073709551615"`: true,
			`"012"`: false, `"-1"`: false, `""`: false, `"1.5"`: false, `"1e3"`: false, `" 1"`: false, `"123456789012345678901"`: false,
		} {
			m[c.field] = json.RawMessage(s)
			b, _ := json.Marshal(m)
			if err := v.ValidatePayload(typ, c.cur, b); (err == nil) != ok {
				t.Errorf("%s v%d %s %s: %v, want accepted %v", typ, c.cur, c.field, s, err, ok)
			}
		}
	}
}
