package schemas_test

import (
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
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
		if cur, _ := reg.Version(p.EventType()); cur != 2 {
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

// Version 2 of TurnStarted (issue 22) adds only the optional rule
// revision: a turn with rules validates against v2 and is refused by v1,
// and a turn without it (revision 1, every earlier build) validates
// against both.
func TestSchemas_TurnStartedV2AddsTheRuleRevision(t *testing.T) {
	v := schemas.NewValidator()
	ts := events.TurnStarted{TurnID: "t", Session: "s", Chat: "direct", Requested: events.ModelRef{Provider: "openai", Model: "gpt-5"},
		SelectionSource: "default", Chain: []events.Candidate{{Provider: "openai", Model: "gpt-5", RouteOrigin: "requested"}},
		ConfigHash: "sha256:c", AttemptLimit: 32, Seed: 7, StartedAt: t0.UnixMilli()}
	if cur, _ := events.NewCatalogRegistry().Version("TurnStarted"); cur != 2 {
		t.Fatalf("TurnStarted is at version %d, want 2", cur)
	}
	old := encoded(t, ts)
	for _, version := range []int{1, 2} {
		if err := v.ValidatePayload("TurnStarted", version, old); err != nil {
			t.Errorf("revision 1 turn, v%d: %v", version, err)
		}
	}
	ts.Rules = 2
	body := encoded(t, ts)
	if err := v.ValidatePayload("TurnStarted", 2, body); err != nil {
		t.Errorf("v2: %v", err)
	}
	if err := v.ValidatePayload("TurnStarted", 1, body); err == nil {
		t.Error("v1 accepted rules")
	}
}
