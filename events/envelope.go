package events

import (
	"encoding/json"
	"time"
)

// Aggregate names the consistency boundary an event belongs to.
type Aggregate string

// The aggregates of the catalog (design "Events").
const (
	// AggConfig holds ConfigApplied: the config in force, named by its hash.
	AggConfig Aggregate = "config"
	// AggProfile holds one auth profile's health (usageStats). Key: profile id,
	// e.g. "openai:user@example.com".
	AggProfile Aggregate = "profile"
	// AggSession holds one session's model selection, auth pin and
	// fallback-notice state. Key: the session key.
	AggSession Aggregate = "session"
	// AggTurn holds one turn's attempts and fallback steps. Key: the turn id.
	AggTurn Aggregate = "turn"
	// AggOrder holds the agent's stored auth-profile order override of one
	// provider (AuthOrderSet). Key: the provider id, e.g. "openai".
	AggOrder Aggregate = "order"
)

// Envelope is the stored form of one event. Field names are the JSON wire
// names; Payload is the type's JSON payload, validated against
// schemas/events/<Type>.v<SchemaVersion>.json before it is ever published.
type Envelope struct {
	// ID is a UUIDv7; it orders events by creation and de-duplicates re-sent
	// appends (the first event's ID is the commit's Nats-Msg-Id).
	ID string `json:"id"`
	// Type is the catalog name, e.g. "AttemptFailed".
	Type string `json:"type"`
	// SchemaVersion is the payload version the event was written with (>= 1).
	SchemaVersion int `json:"schema_version"`
	// At is when the decision was taken (the decider's now), UTC, ms precision.
	At time.Time `json:"at"`
	// Agent is the OpenClaw agent id the event belongs to.
	Agent string `json:"agent"`
	// Aggregate and Key identify the aggregate instance.
	Aggregate Aggregate `json:"aggregate" enum:"config|profile|session|turn|order"`
	Key       string    `json:"key"`
	// CausationID is the id of the event or command that caused this one.
	CausationID string `json:"causation_id,omitempty"`
	// CorrelationID groups the events of one turn (the turn id).
	CorrelationID string `json:"correlation_id,omitempty"`
	// Payload is the type-specific body.
	Payload json.RawMessage `json:"payload"`
}

// Event is a decoded envelope: the envelope's metadata plus the typed
// payload (a value of the registered Go type, e.g. AttemptFailed), already
// upcast to the type's current version.
type Event struct {
	Envelope
	// Data is the typed payload; switch on its type to handle it.
	Data Payload
	// Seq is the JetStream stream sequence of the message that carried the
	// event (0 before it is stored). Several events of one commit share a Seq.
	Seq uint64
	// Index is the event's position inside its commit (0-based).
	Index int
	// Basis is the stream position the decision that wrote the event's
	// commit was taken on: the last stream sequence folded into the state
	// it read (0 = not recorded; commits before it was recorded). Several
	// events of one commit share a Basis. Replay re-decides from exactly
	// that state ([AppendRequest].Basis).
	Basis uint64
}

// Payload is implemented by every catalog payload type.
type Payload interface {
	// EventType returns the catalog name, e.g. "AttemptFailed".
	EventType() string
	// EventAggregate returns the aggregate the type belongs to.
	EventAggregate() Aggregate
}

// Commit is the unit of one atomic append: every event one decision
// produced, stored as a single JetStream message so that a reader sees all
// of them or none.
type Commit struct {
	// Basis is the stream position the decision was taken on (see
	// [Event].Basis); omitted when 0.
	Basis  uint64     `json:"basis,omitempty"`
	Events []Envelope `json:"events"`
}

// Millis converts t to Unix milliseconds (the unit of every payload time);
// the zero time becomes 0.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis converts Unix milliseconds to a UTC time; 0 becomes the zero time.
func FromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
