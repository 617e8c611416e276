package projections

import "github.com/fledger/fledger/events"

// DecisionEvent is a [DecisionRecord]'s `event` field: OpenClaw's log
// event name (reference §8).
const DecisionEvent = "model_fallback_decision"

// DecisionRecord is one model_fallback_decision record: the one shape of a
// decision everywhere fledger hands it out — GET /v1/decisions (and the
// NATS micro decisions.list), `fledger decisions --json`, the JSONL export
// — and the source the OTLP export maps its attributes from. Its JSON
// Schema is schemas/decision-record.v1.json.
//
// Fields, in this order: OpenClaw's `event` and `tags` (reference §8),
// fledger's stream position (`seq`, `idx`), the decision `time`, the
// `agent`, then the FallbackStepped payload flattened with its OpenClaw
// camelCase names (turnId, sessionId, decision, requestedProvider, …
// fallbackStepFinalOutcome). Optional payload fields are absent when empty.
type DecisionRecord struct {
	// Event is always [DecisionEvent].
	Event string `json:"event"`
	// Tags are ["error_handling", "model_fallback", <decision>].
	Tags []string `json:"tags"`
	// Seq is the JetStream stream sequence of the commit that carried the
	// event; Idx the event's index in that commit (0-based). Several
	// records may share a Seq (one commit, several events).
	Seq uint64 `json:"seq"`
	Idx int    `json:"idx"`
	// Time is the decision time (the event's `at`), written as RFC 3339
	// UTC with milliseconds, e.g. "2026-03-02T09:00:01.250Z".
	Time UnixMillis `json:"time"`
	// Agent is the OpenClaw agent id the decision belongs to.
	Agent string `json:"agent"`
	// FallbackStepped holds the model_fallback_decision fields, flattened
	// into the record.
	events.FallbackStepped
}

// DecisionTags returns the record tags for decision (reference §8):
// ["error_handling", "model_fallback", decision].
func DecisionTags(decision string) []string {
	return []string{"error_handling", "model_fallback", decision}
}

// NewDecisionRecord returns the record of fs, stored at (seq, idx) under
// agent and decided at atMillis (Unix ms). An empty turnId is taken from
// key, the event's aggregate key.
func NewDecisionRecord(seq uint64, idx int, atMillis int64, agent, key string, fs events.FallbackStepped) DecisionRecord {
	if fs.TurnID == "" {
		fs.TurnID = key
	}
	return DecisionRecord{
		Event:           DecisionEvent,
		Tags:            DecisionTags(fs.Decision),
		Seq:             seq,
		Idx:             idx,
		Time:            UnixMillis(atMillis),
		Agent:           agent,
		FallbackStepped: fs,
	}
}

// DecisionRecordOf maps a stored event to its record; ok is false for
// every event type other than FallbackStepped (value or non-nil pointer).
func DecisionRecordOf(ev events.Event) (r DecisionRecord, ok bool) {
	var fs events.FallbackStepped
	switch d := ev.Data.(type) {
	case events.FallbackStepped:
		fs = d
	case *events.FallbackStepped:
		if d == nil {
			return DecisionRecord{}, false
		}
		fs = *d
	default:
		return DecisionRecord{}, false
	}
	return NewDecisionRecord(ev.Seq, ev.Index, ev.At.UnixMilli(), ev.Agent, ev.Key, fs), true
}
