package policy

import "github.com/fledger/fledger/events"

// Folder is a caller's state, one method per aggregate of the catalog:
// the one routing from an event to its Evolve* function is [Fold] (or
// [FoldEvent] for a stored event), and every caller that folds events —
// the deciders as they emit, the engine, replay's verify, explain and
// what-if, the bench generator and the metrics — is a Folder. Each method
// receives the aggregate key and the payload and folds it with the
// Evolve* function of its aggregate ([EvolveTurn], [EvolveSession],
// [EvolveProfile], [EvolveOrder]; the config is the engine's, which parses
// it). Embed [Ignore] to keep only some aggregates.
//
// Why an interface with one method per aggregate rather than one Evolve
// over a standard state: the callers keep different shapes (one turn and
// its session while deciding, every session and turn of an agent in the
// engine, profiles keyed by agent in the metrics), and a new aggregate
// then fails to compile in every caller until it says what it keeps.
// A new type of an existing aggregate needs no change here: it reaches
// its aggregate's Evolve*, whose switch must name it
// (TestFold_EveryCatalogTypeIsEvolved).
type Folder interface {
	FoldConfig(key string, p events.Payload)
	FoldProfile(key string, p events.Payload)
	FoldSession(key string, p events.Payload)
	FoldTurn(key string, p events.Payload)
	FoldOrder(key string, p events.Payload)
}

// Fold routes a payload (an event being decided, not stored yet) to f by
// its type's aggregate, under the key it names ([events.KeyOf]). It
// reports false for an aggregate the catalog does not have.
func Fold(f Folder, p events.Payload) bool {
	return route(f, p.EventAggregate(), events.KeyOf(p), p)
}

// FoldEvent routes a stored event to f by its envelope's aggregate and
// key (state is folded by those, never by the subject the commit was
// stored under). It reports false for an aggregate the catalog does not
// have.
func FoldEvent(f Folder, ev *events.Event) bool {
	return route(f, ev.Aggregate, ev.Key, ev.Data)
}

func route(f Folder, agg events.Aggregate, key string, p events.Payload) bool {
	switch agg {
	case events.AggConfig:
		f.FoldConfig(key, p)
	case events.AggProfile:
		f.FoldProfile(key, p)
	case events.AggSession:
		f.FoldSession(key, p)
	case events.AggTurn:
		f.FoldTurn(key, p)
	case events.AggOrder:
		f.FoldOrder(key, p)
	default:
		return false
	}
	return true
}

// Ignore keeps nothing: a [Folder] embeds it to fold only the aggregates
// it defines methods for.
type Ignore struct{}

// FoldConfig ignores p.
func (Ignore) FoldConfig(string, events.Payload) {}

// FoldProfile ignores p.
func (Ignore) FoldProfile(string, events.Payload) {}

// FoldSession ignores p.
func (Ignore) FoldSession(string, events.Payload) {}

// FoldTurn ignores p.
func (Ignore) FoldTurn(string, events.Payload) {}

// FoldOrder ignores p.
func (Ignore) FoldOrder(string, events.Payload) {}
