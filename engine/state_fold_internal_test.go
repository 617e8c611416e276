package engine

import (
	"testing"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// The engine's state folds through the policy's one dispatch.
var _ policy.Folder = (*state)(nil)

// Every catalog type reaches the engine's fold of its aggregate, and the
// config aggregate, folded by the engine itself, knows each of its types:
// a type added to the catalog fails here until the engine folds it.
func TestState_FoldsEveryCatalogType(t *testing.T) {
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	s := newState("main")
	for _, p := range events.Examples() {
		ev := events.New("main", events.KeyOf(p), at, p)
		if !policy.FoldEvent(s, &ev) {
			t.Errorf("%s: aggregate %s has no fold", p.EventType(), p.EventAggregate())
		}
		if p.EventAggregate() == events.AggConfig && !s.foldConfig(p) {
			t.Errorf("%s: the engine's config fold does not know it", p.EventType())
		}
	}
	tests := []struct {
		agg   events.Aggregate
		key   string
		known bool
	}{
		{events.AggConfig, "the example's hash", s.current == events.KeyOf(events.Examples()[0])},
		{events.AggProfile, "openai:user@example.com", s.profiles["openai:user@example.com"].ErrorCount == 2},
		{events.AggSession, "agent:main:telegram:direct:42", s.sessions["agent:main:telegram:direct:42"] != nil},
		{events.AggTurn, "turn-01JH8Z", s.turns["turn-01JH8Z"].Phase == policy.PhaseStopped},
		{events.AggOrder, "openai", len(s.orders["openai"]) == 2},
	}
	for _, tt := range tests {
		if !tt.known {
			t.Errorf("%s %s: not folded", tt.agg, tt.key)
		}
	}
}
