package events_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// firstReleaseRegistry registers every catalog type at version 1, as the
// builds before issue 17 did.
func firstReleaseRegistry(t *testing.T) *events.Registry {
	t.Helper()
	r := events.NewRegistry()
	for _, p := range events.Catalog() {
		testutil.NoError(t, r.Register(p, 1))
	}
	return r
}

// Events are forever: a v1 AttemptFailed, ProfileFailureRecorded,
// ProfileSucceeded and TurnStarted written by an earlier build read at
// their current version (v2; TurnStarted and AttemptFailed v3) with the
// same fields and no reset, block, long window, rule revision or settled
// tool batch.
func TestVersions_V1PayloadsReadAsV2Unchanged(t *testing.T) {
	old := []events.Payload{
		events.AttemptFailed{TurnID: "t1", Attempt: 1, Provider: "openai", Model: "gpt-5", Reason: "rate_limit",
			Status: 429, Disposition: "failover", Evidence: events.Evidence{Rule: "status.429"}, RetryAfterMs: 20000},
		events.ProfileFailureRecorded{ProfileID: "openai:a", Provider: "openai", Model: "gpt-5", Reason: "rate_limit",
			ErrorCount: 1, FailureCounts: map[string]int{"rate_limit": 1}, LastFailureAt: 1000, CooldownUntil: 31000,
			CooldownReason: "rate_limit", CooldownModel: "gpt-5"},
		events.ProfileSucceeded{ProfileID: "openai:a", Provider: "openai", Model: "gpt-5-mini", LastUsed: 5000,
			KeptCooldownUntil: 31000, KeptCooldownReason: "rate_limit", KeptCooldownModel: "gpt-5", KeptErrorCount: 1},
		// Issue 22: a v1 TurnStarted has no rules (revision 1).
		events.TurnStarted{TurnID: "t1", Session: "s1", Chat: "direct", Requested: events.ModelRef{Provider: "openai", Model: "gpt-5"},
			SelectionSource: "default", Chain: []events.Candidate{{Provider: "openai", Model: "gpt-5", RouteOrigin: "requested"}},
			ConfigHash: "sha256:c", AttemptLimit: 32, Seed: 7, StartedAt: 1000},
	}
	var evs []events.Event
	for _, p := range old {
		evs = append(evs, events.New("main", events.KeyOf(p), t0, p))
	}
	body, err := firstReleaseRegistry(t).EncodeCommit(evs)
	testutil.NoError(t, err)
	// The first release wrote the seed as a JSON number (today's Go type
	// writes a string).
	body = []byte(strings.Replace(string(body), `"seed":"7"`, `"seed":7`, 1))
	reg := events.NewCatalogRegistry()
	got, err := reg.DecodeCommit(body, 7, "fledger.main.turn.t1")
	testutil.NoError(t, err)
	if len(got) != len(old) {
		t.Fatalf("%d events", len(got))
	}
	for i, ev := range got {
		cur, _ := reg.Version(ev.Type)
		if want := map[string]int{"TurnStarted": 3, "AttemptFailed": 3}[ev.Type]; cur != max(want, 2) || ev.SchemaVersion != cur || !reflect.DeepEqual(ev.Data, old[i]) {
			t.Errorf("%s read as v%d (current v%d) %+v, want %+v", ev.Type, ev.SchemaVersion, cur, ev.Data, old[i])
		}
	}
}
