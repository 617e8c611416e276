package events

import (
	"time"

	"github.com/google/uuid"
)

// New builds an event for payload p, to be appended by a [Store]: a fresh
// UUIDv7 id, p's type name and aggregate, agent and key as given, and At =
// at truncated to milliseconds in UTC. at is the decision time the decider
// was given (New never reads the clock). SchemaVersion is left 0 and set
// to the type's current version when the event is encoded. Options set the
// causation and correlation ids or a fixed id.
func New(agent, key string, at time.Time, p Payload, opts ...EventOpt) Event {
	ev := Event{
		Envelope: Envelope{
			Agent: agent,
			Key:   key,
			At:    at.UTC().Truncate(time.Millisecond),
		},
		Data: p,
	}
	if p != nil {
		ev.Type = p.EventType()
		ev.Aggregate = p.EventAggregate()
	}
	for _, o := range opts {
		o(&ev)
	}
	if ev.ID == "" {
		ev.ID = uuid.Must(uuid.NewV7()).String()
	}
	return ev
}

// Subject returns the subject of the aggregate instance the event belongs
// to (see [Subject]).
func (e *Event) Subject() (string, error) { return SubjectOf(&e.Envelope) }
