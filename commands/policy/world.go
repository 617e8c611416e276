package policy

import "github.com/fledger/fledger/events"

// World is what one turn's decisions read and write, folded as they are
// made: the turn, its session, every profile's usageStats and the stored
// auth orders. The deciders keep one as they emit, and so do the callers
// that drive a turn decision after decision (replay's what-if, the bench
// generator), so a decision always sees what the previous one decided.
//
// The maps start as the Env's and are copied on the first write, so a
// World never modifies the maps it was given (an engine's are shared by
// concurrent decisions); that keeps a decision allocation-free until it
// records a profile event.
type World struct {
	st          TurnState
	session     SessionState
	profiles    map[string]ProfileState
	orders      map[string][]string
	ownProfiles bool
	ownOrders   bool
}

// NewWorld starts a World at turn st and env's session, profiles and
// stored orders.
func NewWorld(st TurnState, env Env) World {
	return World{st: st, session: env.Session, profiles: env.Profiles, orders: env.StoredOrder}
}

// Turn returns the turn as folded so far.
func (w *World) Turn() TurnState { return w.st }

// Session returns the session as folded so far.
func (w *World) Session() SessionState { return w.session }

// Env returns env with the World's session, profiles and stored orders:
// the Env of the next decision. Its maps are the World's own; do not
// modify them.
func (w *World) Env(env Env) Env {
	env.Session, env.Profiles, env.StoredOrder = w.session, w.profiles, w.orders
	return env
}

// Fold folds the payloads in order, as [Fold] routes them.
func (w *World) Fold(ps ...events.Payload) {
	for _, p := range ps {
		w.fold(p.EventAggregate(), events.KeyOf(p), p)
	}
}

// FoldEvent folds a stored event, as [FoldEvent] routes it.
// The stream sequence of a turn start or a user command is noted
// ([NoteSeq]).
func (w *World) FoldEvent(ev *events.Event) {
	w.fold(ev.Aggregate, ev.Key, ev.Data)
	if ev.Seq == 0 {
		return
	}
	var t *TurnState
	var s *SessionState
	if ev.Aggregate == events.AggTurn && ev.Key == w.st.TurnID {
		t = &w.st
	}
	if ev.Aggregate == events.AggSession && w.session.owns(ev.Key) {
		s = &w.session
	}
	NoteSeq(t, s, ev.Data, ev.Seq, ev.Basis)
}

// fold is route with the World's methods called directly: through the
// Folder interface the World, and the decider that holds it, would escape
// to the heap, one allocation of a few kilobytes per decision. The two
// routings are kept equal by TestWorld_RoutesLikeFold.
func (w *World) fold(agg events.Aggregate, key string, p events.Payload) {
	switch agg {
	case events.AggProfile:
		w.FoldProfile(key, p)
	case events.AggSession:
		w.FoldSession(key, p)
	case events.AggTurn:
		w.FoldTurn(key, p)
	case events.AggOrder:
		w.FoldOrder(key, p)
	}
}

// FoldConfig ignores p: the config a decision runs under is its Env's.
func (w *World) FoldConfig(string, events.Payload) {}

// FoldTurn folds p with [EvolveTurn].
func (w *World) FoldTurn(_ string, p events.Payload) { w.st = EvolveTurn(w.st, p) }

// FoldSession folds p with [EvolveSession]; a SessionPruned of the
// session while the World's turn is open is void (as the engine's fold
// voids one while any turn of the session is open).
func (w *World) FoldSession(_ string, p events.Payload) {
	if _, pruned := p.(events.SessionPruned); pruned && w.st.Phase.Open() {
		return
	}
	w.session = EvolveSession(w.session, p)
}

// FoldProfile folds p into profile key with [EvolveProfile].
func (w *World) FoldProfile(key string, p events.Payload) {
	if !w.ownProfiles {
		w.profiles, w.ownProfiles = cloneMap(w.profiles), true
	}
	w.profiles[key] = EvolveProfile(w.profiles[key], p)
}

// FoldOrder folds p into provider key's stored order ([EvolveOrders]).
func (w *World) FoldOrder(key string, p events.Payload) {
	if !w.ownOrders {
		w.orders, w.ownOrders = cloneMap(w.orders), true
	}
	EvolveOrders(w.orders, key, p)
}

// cloneMap copies m with room for one more entry.
func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
