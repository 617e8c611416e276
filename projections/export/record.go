package export

import (
	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/redact"
	"github.com/fledger/fledger/projections"
)

// EventName is the record's `event` field, OpenClaw's log event name
// (reference §8).
const EventName = projections.DecisionEvent

// TimeLayout is the layout of a record's `time`: RFC 3339, UTC,
// milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Record is one model_fallback_decision record as exported: a
// [projections.DecisionRecord], the one decision shape fledger writes
// (GET /v1/decisions, `fledger decisions --json` and a JSONL line are the
// same bytes; OTLP maps its attributes from it), plus the record's place
// among the records of its commit, which no output carries.
type Record struct {
	projections.DecisionRecord

	// ordinal is the record's position among the records of its commit
	// (0-based), set by [Records]; with Seq it orders records totally and
	// is the resume cursor of a file sink (which counts its lines per Seq,
	// so a file written before records carried `idx` resumes alike).
	ordinal int
}

// Tags returns the record tags for decision (reference §8):
// ["error_handling", "model_fallback", decision].
func Tags(decision string) []string { return projections.DecisionTags(decision) }

// FromEvent maps a stored event to its record. ok is false for every
// event type other than FallbackStepped. Previews (errorPreview,
// fallbackStepFromFailureDetail, consoleMessage and each previous
// attempt's errorPreview) are run through [redact.String] again,
// defensively: they were redacted before they were appended, and redaction
// is idempotent. ev is not modified.
func FromEvent(ev events.Event) (r Record, ok bool) {
	d, ok := projections.DecisionRecordOf(ev)
	if !ok {
		return Record{}, false
	}
	d.ErrorPreview = redact.String(d.ErrorPreview)
	d.FallbackStepFromDetail = redact.String(d.FallbackStepFromDetail)
	d.ConsoleMessage = redact.String(d.ConsoleMessage)
	if len(d.PreviousAttempts) > 0 {
		prev := make([]events.PreviousAttempt, len(d.PreviousAttempts))
		copy(prev, d.PreviousAttempts)
		for i := range prev {
			prev[i].ErrorPreview = redact.String(prev[i].ErrorPreview)
		}
		d.PreviousAttempts = prev
	}
	return Record{DecisionRecord: d}, true
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
