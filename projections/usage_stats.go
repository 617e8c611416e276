package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// usageColumns are usage_stats' columns in table order; the first two are
// the key.
var usageColumns = []string{
	"agent", "profileId", "provider", "lastUsed", "lastProbeAt", "errorCount",
	"lastFailureAt", "failureCounts", "cooldownUntil", "cooldownReason",
	"cooldownModel", "disabledUntil", "disabledReason", "blockedUntil", "blockedReason",
	"blockedSource", "blockedModel", "updatedAt", "lastSeq",
}

// profileRow is one usage_stats row: the profile's folded
// [policy.ProfileState] (reference §4 usageStats) plus bookkeeping.
type profileRow struct {
	key
	st policy.ProfileState
	// updatedAt is the envelope time of the last event folded (Unix ms),
	// lastSeq its stream sequence.
	updatedAt int64
	lastSeq   uint64
	dirty     bool
}

// fold applies one profile event with [policy.EvolveProfile].
func (r *profileRow) fold(p events.Payload, at int64, seq uint64) {
	r.st = policy.EvolveProfile(r.st, p)
	r.updatedAt, r.lastSeq, r.dirty = at, seq, true
}

func (r *profileRow) args() []any {
	s := &r.st
	return []any{r.agent, r.id, s.Provider, s.LastUsed, s.LastProbeAt, s.ErrorCount,
		s.LastFailureAt, countsJSON(s.FailureCounts), s.CooldownUntil, s.CooldownReason,
		s.CooldownModel, s.DisabledUntil, s.DisabledReason, s.BlockedUntil, s.BlockedReason,
		s.BlockedSource, s.BlockedModel, r.updatedAt, int64(r.lastSeq)}
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

// profile returns the cached row for k, loading it from the table on a
// miss (a new profile starts empty).
func (p *Projector) profile(ctx context.Context, c *cache, k key) (*profileRow, error) {
	if r := c.profiles[k]; r != nil {
		return r, nil
	}
	r := &profileRow{key: k}
	var counts string
	var seq int64
	s := &r.st
	err := p.stmts.loadUsage.QueryRowContext(ctx, k.agent, k.id).Scan(&s.Provider, &s.LastUsed, &s.LastProbeAt,
		&s.ErrorCount, &s.LastFailureAt, &counts, &s.CooldownUntil, &s.CooldownReason, &s.CooldownModel,
		&s.DisabledUntil, &s.DisabledReason, &s.BlockedUntil, &s.BlockedReason, &s.BlockedSource, &s.BlockedModel,
		&r.updatedAt, &seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, p.db.wrap(err)
	default:
		s.ProfileID, r.lastSeq = k.id, uint64(seq)
		if counts != "{}" {
			if err := json.Unmarshal([]byte(counts), &s.FailureCounts); err != nil {
				return nil, &DBError{Path: p.db.path, Detail: "usage_stats.failureCounts of " + k.id + ": " + err.Error(), Err: ErrCorrupt}
			}
		}
	}
	c.profiles[k] = r
	return r, nil
}
