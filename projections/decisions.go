package projections

import (
	"encoding/json"

	"github.com/fledger/fledger/events"
)

// decisionColumns are fallback_decisions' columns in table order: the
// stream position (seq, idx), time and agent, then the
// model_fallback_decision fields with OpenClaw's names (reference §8, the
// JSON names of [events.FallbackStepped]).
var decisionColumns = []string{
	"seq", "idx", "at", "agent", "turnId", "sessionId", "decision",
	"requestedProvider", "requestedModel", "candidateProvider", "candidateModel",
	"candidateRouteOrigin", "attempt", "total", "reason", "status", "code",
	"errorPreview", "errorHash", "nextCandidateProvider", "nextCandidateModel",
	"nextCandidateRouteOrigin", "isPrimary", "requestedModelMatched",
	"fallbackConfigured", "allowTransientCooldownProbe", "profileCount",
	"previousAttempts", "consoleMessage", "fallbackStepType",
	"fallbackStepFromModel", "fallbackStepToModel", "fallbackStepFromFailureReason",
	"fallbackStepFromFailureDetail", "fallbackStepChainPosition",
	"fallbackStepFinalOutcome",
}

// decisionRow is one fallback_decisions row: one FallbackStepped event.
type decisionRow struct {
	seq   uint64
	idx   int
	at    int64
	agent string
	e     *events.FallbackStepped
}

func newDecisionRow(ev *events.Event, fs *events.FallbackStepped) decisionRow {
	return decisionRow{seq: ev.Seq, idx: ev.Index, at: ev.At.UnixMilli(), agent: ev.Agent, e: fs}
}

func (r *decisionRow) args() []any {
	e := r.e
	prev := "[]"
	if len(e.PreviousAttempts) > 0 {
		b, _ := json.Marshal(e.PreviousAttempts)
		prev = string(b)
	}
	return []any{int64(r.seq), r.idx, r.at, r.agent, e.TurnID, e.SessionID, e.Decision,
		e.RequestedProvider, e.RequestedModel, e.CandidateProvider, e.CandidateModel,
		e.CandidateRouteOrigin, e.Attempt, e.Total, e.Reason, e.Status, e.Code,
		e.ErrorPreview, e.ErrorHash, e.NextCandidateProvider, e.NextCandidateModel,
		e.NextCandidateRouteOrigin, b2i(e.IsPrimary), b2i(e.RequestedModelMatched),
		b2i(e.FallbackConfigured), b2i(e.AllowTransientProbe), e.ProfileCount,
		prev, e.ConsoleMessage, e.FallbackStepType,
		e.FallbackStepFromModel, e.FallbackStepToModel, e.FallbackStepFromReason,
		e.FallbackStepFromDetail, e.FallbackStepChainPosition, e.FallbackStepFinalOutcome}
}
