package projections

import (
	"encoding/json"
	"fmt"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// sessionSelection is the session_selection table: one row per (agent,
// session key), the session's folded [policy.SessionState] (stored
// selection, auth pin, fallback notice, compactions, last reset). A
// SessionPruned (session maintenance) deletes the session's row, as
// [policy.EvolveSession] drops its state: a pruned session is listed
// nowhere, and its next event starts a new row. A prune folded while a
// turn of the session is open (started, running or waiting: its turns
// row unfinished) is void, as in the engine: the row stays as it was
// ([openTurns]).
var sessionSelection = register(&table{
	name: "session_selection", order: 30, key: 2, withoutRowID: true, upsert: true,
	columns: []column{
		text("agent"), text("sessionKey"),
		text("providerOverride"), text("modelOverride"), text("modelOverrideSource"),
		text("autoOriginProvider"), text("autoOriginModel"),
		text("fallbacksOverride"), integer("hasFallbacksOverride"),
		text("authProfileOverride"), text("authProfileOverrideProvider"), text("authProfileOverrideSource"),
		text("fallbackNoticeSelectedModel"), text("fallbackNoticeActiveModel"), text("fallbackNoticeReason"),
		integer("compactionCount"), text("lastReset"), millis("lastResetAt"),
		millis("updatedAt"), integer("lastSeq"),
	},
	folds: []events.Payload{
		events.SessionModelSelected{}, events.SessionModelCleared{}, events.SessionAuthPinned{},
		events.SessionAuthUnpinned{}, events.SessionReset{}, events.FallbackNoticeStateChanged{},
		events.CompactionCompleted{}, events.SessionPruned{},
	},
	deletes: []events.Payload{events.SessionPruned{}},
	rows:    keyed(func(k key) keyedRow { return &sessionRow{key: k} }, nil),
})

// sessionRow is one session_selection row: the session's folded
// [policy.SessionState] plus the time of its last reset.
type sessionRow struct {
	key
	st          policy.SessionState
	lastResetAt int64
	updatedAt   int64
	lastSeq     int64
	// fallbacks and hasFallbacks are the columns as read back.
	fallbacks    string
	hasFallbacks int64
}

// fold applies one session event with [policy.EvolveSession]; a
// SessionReset the state accepts also stamps lastResetAt.
func (r *sessionRow) fold(ev *events.Event) {
	at := ev.At.UnixMilli()
	if e, ok := ev.Data.(events.SessionReset); ok && (r.st.Session == "" || r.st.Session == e.Session) {
		r.lastResetAt = at
	}
	r.st = policy.EvolveSession(r.st, ev.Data)
	r.updatedAt, r.lastSeq = at, int64(ev.Seq)
}

func (r *sessionRow) values(dst []any) []any {
	s := &r.st
	fb := ""
	if len(s.Fallbacks) > 0 || s.HasFallbacks {
		b, _ := json.Marshal(append([]policy.ModelRef{}, s.Fallbacks...))
		fb = string(b)
	}
	return append(dst, r.agent, r.id, s.Model.Provider, s.Model.Model, s.Source,
		s.Origin.Provider, s.Origin.Model, fb, b2i(s.HasFallbacks),
		s.Pin, s.PinProvider, s.PinSource,
		s.Notice.Selected, s.Notice.Active, s.Notice.Reason,
		s.CompactionCount, s.LastReset, r.lastResetAt, r.updatedAt, r.lastSeq)
}

func (r *sessionRow) dest() []any {
	s := &r.st
	return []any{&s.Model.Provider, &s.Model.Model, &s.Source,
		&s.Origin.Provider, &s.Origin.Model, &r.fallbacks, &r.hasFallbacks,
		&s.Pin, &s.PinProvider, &s.PinSource,
		&s.Notice.Selected, &s.Notice.Active, &s.Notice.Reason,
		&s.CompactionCount, &s.LastReset, &r.lastResetAt, &r.updatedAt, &r.lastSeq}
}

func (r *sessionRow) loaded(id string) error {
	s := &r.st
	s.Session, s.HasFallbacks = id, r.hasFallbacks != 0
	if r.fallbacks != "" {
		if err := json.Unmarshal([]byte(r.fallbacks), &s.Fallbacks); err != nil {
			return fmt.Errorf("fallbacksOverride of %s: %w", id, err)
		}
		if len(s.Fallbacks) == 0 {
			s.Fallbacks = nil
		}
	}
	r.fallbacks = ""
	return nil
}
