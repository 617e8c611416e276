package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// sessionColumns are session_selection's columns in table order; the first
// two are the key.
var sessionColumns = []string{
	"agent", "sessionKey", "providerOverride", "modelOverride", "modelOverrideSource",
	"autoOriginProvider", "autoOriginModel", "fallbacksOverride", "hasFallbacksOverride",
	"authProfileOverride", "authProfileOverrideProvider", "authProfileOverrideSource",
	"fallbackNoticeSelectedModel", "fallbackNoticeActiveModel", "fallbackNoticeReason",
	"compactionCount", "lastReset", "lastResetAt", "updatedAt", "lastSeq",
}

// sessionRow is one session_selection row: the session's folded
// [policy.SessionState] plus the time of its last reset.
type sessionRow struct {
	key
	st          policy.SessionState
	lastResetAt int64
	updatedAt   int64
	lastSeq     uint64
	dirty       bool
}

// fold applies one session event with [policy.EvolveSession]; a
// SessionReset the state accepts also stamps lastResetAt.
func (r *sessionRow) fold(p events.Payload, at int64, seq uint64) {
	if e, ok := p.(events.SessionReset); ok && (r.st.Session == "" || r.st.Session == e.Session) {
		r.lastResetAt = at
	}
	r.st = policy.EvolveSession(r.st, p)
	r.updatedAt, r.lastSeq, r.dirty = at, seq, true
}

func (r *sessionRow) args() []any {
	s := &r.st
	fb := ""
	if len(s.Fallbacks) > 0 || s.HasFallbacks {
		b, _ := json.Marshal(append([]policy.ModelRef{}, s.Fallbacks...))
		fb = string(b)
	}
	return []any{r.agent, r.id, s.Model.Provider, s.Model.Model, s.Source,
		s.Origin.Provider, s.Origin.Model, fb, b2i(s.HasFallbacks),
		s.Pin, s.PinProvider, s.PinSource,
		s.Notice.Selected, s.Notice.Active, s.Notice.Reason,
		s.CompactionCount, s.LastReset, r.lastResetAt, r.updatedAt, int64(r.lastSeq)}
}

// session returns the cached row for k, loading it on a miss.
func (p *Projector) session(ctx context.Context, c *cache, k key) (*sessionRow, error) {
	if r := c.sessions[k]; r != nil {
		return r, nil
	}
	r := &sessionRow{key: k}
	s := &r.st
	var fb string
	var hasFB, seq int64
	err := p.stmts.loadSession.QueryRowContext(ctx, k.agent, k.id).Scan(&s.Model.Provider, &s.Model.Model, &s.Source,
		&s.Origin.Provider, &s.Origin.Model, &fb, &hasFB, &s.Pin, &s.PinProvider, &s.PinSource,
		&s.Notice.Selected, &s.Notice.Active, &s.Notice.Reason, &s.CompactionCount, &s.LastReset,
		&r.lastResetAt, &r.updatedAt, &seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, p.db.wrap(err)
	default:
		s.Session, s.HasFallbacks, r.lastSeq = k.id, hasFB != 0, uint64(seq)
		if fb != "" {
			if err := json.Unmarshal([]byte(fb), &s.Fallbacks); err != nil {
				return nil, &DBError{Path: p.db.path, Detail: "session_selection.fallbacksOverride of " + k.id + ": " + err.Error(), Err: ErrCorrupt}
			}
			if len(s.Fallbacks) == 0 {
				s.Fallbacks = nil
			}
		}
	}
	c.sessions[k] = r
	return r, nil
}
