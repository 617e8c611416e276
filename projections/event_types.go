package projections

import "github.com/fledger/fledger/events"

// ignoredEvents are the catalog's event types no projection table folds,
// each with the reason. A type is known to the projector when a table
// folds it ([table].folds) or it is listed here; any other type is
// unknown ([UnknownTypeError], or a skip with [WithSkipUnknown]).
// TestEventTypes_EveryCatalogTypeIsHandled fails when a type of
// [events.Catalog] is neither.
var ignoredEvents = []struct {
	event events.Payload
	why   string
}{
	// None since schema version 5: agent_spans folds every type (the
	// ledger's first and last event times per agent). ConfigApplied and
	// AuthOrderSet have no row of their own.
}

// eventTables maps each known event type to the tables that fold it, as
// positions in [tables] (none for an ignored type). It is derived from the
// tables' folds and [ignoredEvents] when the package initialises, after
// every table registered.
var eventTables map[string][]int

func init() {
	eventTables = map[string][]int{}
	for _, ig := range ignoredEvents {
		eventTables[ig.event.EventType()] = nil
	}
	for i, t := range tables {
		for _, p := range t.folds {
			eventTables[p.EventType()] = append(eventTables[p.EventType()], i)
		}
	}
}

// known reports whether the projector folds or deliberately ignores type
// typ.
func known(typ string) bool {
	_, ok := eventTables[typ]
	return ok
}
