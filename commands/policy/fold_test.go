package policy

import (
	"reflect"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
)

// routes records which Folder method a payload reached, with its key.
type routes struct {
	agg events.Aggregate
	key string
}

func (r *routes) FoldConfig(k string, _ events.Payload)  { r.agg, r.key = events.AggConfig, k }
func (r *routes) FoldProfile(k string, _ events.Payload) { r.agg, r.key = events.AggProfile, k }
func (r *routes) FoldSession(k string, _ events.Payload) { r.agg, r.key = events.AggSession, k }
func (r *routes) FoldTurn(k string, _ events.Payload)    { r.agg, r.key = events.AggTurn, k }
func (r *routes) FoldOrder(k string, _ events.Payload)   { r.agg, r.key = events.AggOrder, k }

// Every catalog type reaches the Folder method of its own aggregate,
// under the key it names, whether folded as a payload or as a stored event.
func TestFold_RoutesEveryCatalogType(t *testing.T) {
	for _, p := range events.Examples() {
		t.Run(p.EventType(), func(t *testing.T) {
			var r routes
			if !Fold(&r, p) || r.agg != p.EventAggregate() || r.key != events.KeyOf(p) {
				t.Fatalf("Fold reached %q under key %q", r.agg, r.key)
			}
			ev := events.New("main", events.KeyOf(p), time.UnixMilli(t0), p)
			r = routes{}
			if !FoldEvent(&r, &ev) || r.agg != p.EventAggregate() || r.key != ev.Key {
				t.Fatalf("FoldEvent reached %q under key %q", r.agg, r.key)
			}
		})
	}
}

// evolves reports whether the Evolve* of p's aggregate has a case for p's
// type; the config is folded by the engine (its test covers it).
func evolves(p events.Payload) bool {
	switch p.EventAggregate() {
	case events.AggTurn:
		var s TurnState
		return s.apply(p)
	case events.AggSession:
		_, ok := evolveSession(SessionState{}, p)
		return ok
	case events.AggProfile:
		_, ok := evolveProfile(ProfileState{}, p)
		return ok
	case events.AggOrder:
		_, ok := evolveOrder(nil, p)
		return ok
	case events.AggConfig:
		return true
	}
	return false
}

// A type added to the catalog fails here until the Evolve* of its
// aggregate names it (even to do nothing with it).
func TestFold_EveryCatalogTypeIsEvolved(t *testing.T) {
	for _, p := range events.Catalog() {
		if !evolves(p) {
			t.Errorf("%s (aggregate %s): no case in its aggregate's Evolve*", p.EventType(), p.EventAggregate())
		}
	}
}

// A World folds a decision's events into copies: the Env's maps are never
// written, and the next decision's Env sees what was folded.
func TestWorld_FoldsIntoCopies(t *testing.T) {
	profiles := map[string]ProfileState{"openai:a": {ProfileID: "openai:a", ErrorCount: 1}}
	orders := map[string][]string{"openai": {"openai:a"}}
	env := Env{Profiles: profiles, StoredOrder: orders}
	w := NewWorld(TurnState{}, env)
	ps := []events.Payload{
		events.TurnStarted{TurnID: "t1", Session: "s1"},
		events.SessionAuthPinned{Session: "s1", ProfileID: "openai:a", Provider: "openai", Source: string(PinAuto)},
		events.ProfileCleared{ProfileID: "openai:a"},
		events.AuthOrderSet{Provider: "openai"},
		events.AuthOrderSet{Provider: "anthropic", ProfileIDs: []string{"anthropic:b"}},
	}
	w.Fold(ps...)
	next := w.Env(env)
	tests := []struct {
		name      string
		got, want any
	}{
		{"turn", w.Turn().TurnID, "t1"},
		{"session pin", next.Session.Pin, "openai:a"},
		{"folded profile", next.Profiles["openai:a"].ErrorCount, 0},
		{"given profiles untouched", profiles["openai:a"].ErrorCount, 1},
		{"folded orders", next.StoredOrder, map[string][]string{"anthropic": {"anthropic:b"}}},
		{"given orders untouched", orders, map[string][]string{"openai": {"openai:a"}}},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// The World's own routing (kept off the Folder interface so a decision
// stays on the stack) folds every catalog type exactly as Fold does.
func TestWorld_RoutesLikeFold(t *testing.T) {
	env := Env{Profiles: map[string]ProfileState{}, StoredOrder: map[string][]string{}}
	direct, routed := NewWorld(TurnState{}, env), NewWorld(TurnState{}, env)
	for _, p := range events.Examples() {
		direct.Fold(p)
		Fold(&routed, p)
		if !reflect.DeepEqual(direct, routed) {
			t.Fatalf("after %s: World.Fold %+v, Fold %+v", p.EventType(), direct, routed)
		}
	}
}
