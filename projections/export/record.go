package export

import (
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
)

// EventName is the record's `event` field, OpenClaw's log event name
// (reference §8).
const EventName = "model_fallback_decision"

// TimeLayout is the layout of [Record].Time: RFC 3339, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Record is one model_fallback_decision log record as exported: OpenClaw's
// `event` and `tags` (reference §8), fledger's position fields, then the
// FallbackStepped payload with its OpenClaw camelCase names (turnId,
// sessionId, decision, requestedProvider, … fallbackStepFinalOutcome).
// Field order is fixed by the struct, so every line of a JSONL export has
// its fields in the same order.
type Record struct {
	// Event is always [EventName].
	Event string `json:"event"`
	// Tags are ["error_handling", "model_fallback", <decision>].
	Tags []string `json:"tags"`
	// Seq is the JetStream stream sequence of the commit that carried the
	// event. Several records may share a Seq (one commit, several events).
	Seq uint64 `json:"seq"`
	// Time is the decision time (the event's `at`), RFC 3339 UTC with
	// milliseconds, e.g. "2026-03-02T09:00:01.250Z".
	Time string `json:"time"`
	// Agent is the OpenClaw agent id the decision belongs to.
	Agent string `json:"agent"`
	// FallbackStepped holds the model_fallback_decision fields, flattened
	// into the record, previews redacted again by [FromEvent].
	events.FallbackStepped

	// ordinal is the record's position among the records of its commit
	// (0-based), set by [Records]; with Seq it orders records totally and
	// is the resume cursor of a file sink (which counts its lines per Seq).
	ordinal int
}

// Tags returns the record tags for decision (reference §8):
// ["error_handling", "model_fallback", decision].
func Tags(decision string) []string {
	return []string{"error_handling", "model_fallback", decision}
}

// FromEvent maps a stored event to its record. ok is false for every
// event type other than FallbackStepped. Previews (errorPreview,
// fallbackStepFromFailureDetail, consoleMessage and each previous
// attempt's errorPreview) are run through [redact.String] again,
// defensively: they were redacted before they were appended, and redaction
// is idempotent. ev is not modified.
func FromEvent(ev events.Event) (r Record, ok bool) {
	var fs events.FallbackStepped
	switch d := ev.Data.(type) {
	case events.FallbackStepped:
		fs = d
	case *events.FallbackStepped:
		if d == nil {
			return Record{}, false
		}
		fs = *d
	default:
		return Record{}, false
	}
	fs.ErrorPreview = redact.String(fs.ErrorPreview)
	fs.FallbackStepFromDetail = redact.String(fs.FallbackStepFromDetail)
	fs.ConsoleMessage = redact.String(fs.ConsoleMessage)
	if len(fs.PreviousAttempts) > 0 {
		prev := make([]events.PreviousAttempt, len(fs.PreviousAttempts))
		copy(prev, fs.PreviousAttempts)
		for i := range prev {
			prev[i].ErrorPreview = redact.String(prev[i].ErrorPreview)
		}
		fs.PreviousAttempts = prev
	}
	if fs.TurnID == "" {
		fs.TurnID = ev.Key
	}
	return Record{
		Event:           EventName,
		Tags:            Tags(fs.Decision),
		Seq:             ev.Seq,
		Time:            FormatTime(ev.At),
		Agent:           ev.Agent,
		FallbackStepped: fs,
	}, true
}

// FormatTime formats t as [TimeLayout] in UTC, truncated to milliseconds.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Millisecond).Format(TimeLayout)
}

// Records maps the events of one or more whole commits, in stream order,
// to their records (see [FromEvent]), numbering the records of each commit
// so that a sink can tell a redelivered record from a new one.
func Records(evs []events.Event) []Record {
	var (
		out  []Record
		seq  uint64
		next int
	)
	for _, ev := range evs {
		r, ok := FromEvent(ev)
		if !ok {
			continue
		}
		if ev.Seq != seq {
			seq, next = ev.Seq, 0
		}
		r.ordinal = next
		next++
		out = append(out, r)
	}
	return out
}
