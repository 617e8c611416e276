package projections

import (
	"encoding/json"

	"github.com/fledger/fledger/events"
)

// fallbackDecisions is the fallback_decisions table: one row per
// FallbackStepped event (model_fallback_decision), keyed by its stream
// position (seq, idx), then its time and agent, then the
// model_fallback_decision fields with OpenClaw's names (reference §8, the
// JSON names of [events.FallbackStepped]).
var fallbackDecisions = register(&table{
	name: "fallback_decisions", order: 50, key: 2, withoutRowID: true,
	columns: []column{
		integer("seq"), integer("idx"), millis("at"), text("agent"),
		text("turnId"), text("sessionId"), text("decision"),
		text("requestedProvider"), text("requestedModel"),
		text("candidateProvider"), text("candidateModel"), text("candidateRouteOrigin"),
		integer("attempt"), integer("total"), text("reason"), integer("status"), text("code"),
		text("errorPreview"), text("errorHash"),
		text("nextCandidateProvider"), text("nextCandidateModel"), text("nextCandidateRouteOrigin"),
		integer("isPrimary"), integer("requestedModelMatched"), integer("fallbackConfigured"),
		integer("allowTransientCooldownProbe"), integer("profileCount"),
		text("previousAttempts"), text("consoleMessage"),
		text("fallbackStepType"), text("fallbackStepFromModel"), text("fallbackStepToModel"),
		text("fallbackStepFromFailureReason"), text("fallbackStepFromFailureDetail"),
		integer("fallbackStepChainPosition"), text("fallbackStepFinalOutcome"),
	},
	indexes: []index{
		{"fallback_decisions_turn", []string{"turnId"}},
		{"fallback_decisions_session", []string{"sessionId", "at"}},
		{"fallback_decisions_at", []string{"at"}},
	},
	folds: []events.Payload{events.FallbackStepped{}},
	rows:  appended(newDecisionRow, (*decisionRow).values),
})

// decisionRow is one fallback_decisions row: one FallbackStepped event.
type decisionRow struct {
	seq   uint64
	idx   int
	at    int64
	agent string
	e     *events.FallbackStepped
}

func newDecisionRow(ev *events.Event) (decisionRow, bool) {
	fs, ok := ev.Data.(events.FallbackStepped)
	return decisionRow{seq: ev.Seq, idx: ev.Index, at: ev.At.UnixMilli(), agent: ev.Agent, e: &fs}, ok
}

func (r *decisionRow) values() []any {
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
