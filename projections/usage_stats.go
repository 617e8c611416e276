package projections

import (
	"encoding/json"
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// usageStats is the usage_stats table: one row per (agent, auth
// profile), the profile's folded [policy.ProfileState] (reference §4
// usageStats).
var usageStats = register(&table{
	name: "usage_stats", order: 20, key: 2, withoutRowID: true, upsert: true,
	columns: []column{
		text("agent"), text("profileId"), text("provider"),
		millis("lastUsed"), millis("lastProbeAt"), integer("errorCount"),
		millis("lastFailureAt"), text("failureCounts"),
		millis("cooldownUntil"), text("cooldownReason"), text("cooldownModel"),
		millis("disabledUntil"), text("disabledReason"),
		millis("blockedUntil"), text("blockedReason"), text("blockedSource"), text("blockedModel"),
		millis("updatedAt"), integer("lastSeq"),
	},
	folds: []events.Payload{
		events.ProfileFailureRecorded{}, events.ProfileSucceeded{}, events.ProfileUsed{}, events.ProfileCleared{},
	},
	rows: keyed(func(k key) keyedRow { return &profileRow{key: k} }, nil),
})

// profileRow is one usage_stats row: the profile's folded
// [policy.ProfileState] plus bookkeeping.
type profileRow struct {
	key
	st policy.ProfileState
	// updatedAt is the envelope time of the last event folded (Unix ms),
	// lastSeq its stream sequence.
	updatedAt int64
	lastSeq   int64
	// counts is failureCounts as read back (JSON).
	counts string
}

// fold applies one profile event with [policy.EvolveProfile].
func (r *profileRow) fold(ev *events.Event) {
	r.st = policy.EvolveProfile(r.st, ev.Data)
	r.updatedAt, r.lastSeq = ev.At.UnixMilli(), int64(ev.Seq)
}

func (r *profileRow) values(dst []any) []any {
	s := &r.st
	return append(dst, r.agent, r.id, s.Provider, s.LastUsed, s.LastProbeAt, s.ErrorCount,
		s.LastFailureAt, countsJSON(s.FailureCounts), s.CooldownUntil, s.CooldownReason,
		s.CooldownModel, s.DisabledUntil, s.DisabledReason, s.BlockedUntil, s.BlockedReason,
		s.BlockedSource, s.BlockedModel, r.updatedAt, r.lastSeq)
}

func (r *profileRow) dest() []any {
	s := &r.st
	return []any{&s.Provider, &s.LastUsed, &s.LastProbeAt, &s.ErrorCount,
		&s.LastFailureAt, &r.counts, &s.CooldownUntil, &s.CooldownReason,
		&s.CooldownModel, &s.DisabledUntil, &s.DisabledReason, &s.BlockedUntil, &s.BlockedReason,
		&s.BlockedSource, &s.BlockedModel, &r.updatedAt, &r.lastSeq}
}

func (r *profileRow) loaded(id string) error {
	r.st.ProfileID = id
	if r.counts != "{}" {
		if err := json.Unmarshal([]byte(r.counts), &r.st.FailureCounts); err != nil {
			return fmt.Errorf("failureCounts of %s: %w", id, err)
		}
	}
	r.counts = ""
	return nil
}

// countsJSON renders failureCounts as a JSON object with sorted keys ("{}"
// when empty).
func countsJSON(m map[string]int) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m) // map keys are sorted by encoding/json
	return string(b)
}
