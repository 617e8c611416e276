package projections

import "github.com/fledger/fledger/events"

// ignoredEvents are the catalog's event types no projection table folds
// (beyond agent_spans, which folds every known type),
// each with the reason. A type is known to the projector when a table
// folds it ([table].folds) or it is listed here; any other type is
// unknown ([UnknownTypeError], or a skip with [WithSkipUnknown]).
// TestEventTypes_EveryCatalogTypeIsHandled fails when a type of
// [events.Catalog] is neither.
var ignoredEvents = []struct {
	event events.Payload
	why   string
}{
	{events.ConfigApplied{}, "a configuration snapshot: the turns carry its hash (turns.configHash), no table has a row per config"},
	{events.AuthOrderSet{}, "the auth-order aggregate is a decider input (the rotation order), not a projected row"},
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
	// A table that folds every event (agent_spans) gets every known type,
	// without making any type known: a new catalog type still has to be
	// folded by a table of its own or ignored with a reason.
	for i, t := range tables {
		if t.foldsAll {
			for typ := range eventTables {
				eventTables[typ] = append(eventTables[typ], i)
			}
		}
	}
}

// known reports whether the projector folds or deliberately ignores type
// typ.
func known(typ string) bool {
	_, ok := eventTables[typ]
	return ok
}
