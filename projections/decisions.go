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
	rows:  appended(newDecisionRow),
})

// decisionRow is one fallback_decisions row: one FallbackStepped event
// as its [DecisionRecord].
type decisionRow struct{ r DecisionRecord }

func newDecisionRow(ev *events.Event) (decisionRow, bool) {
	r, ok := DecisionRecordOf(*ev)
	return decisionRow{r}, ok
}

func (row *decisionRow) values(dst []any) []any {
	r := &row.r
	prev := "[]"
	if len(r.PreviousAttempts) > 0 {
		b, _ := json.Marshal(r.PreviousAttempts)
		prev = string(b)
	}
	return append(dst, int64(r.Seq), r.Idx, int64(r.Time), r.Agent, r.TurnID, r.SessionID, r.Decision,
		r.RequestedProvider, r.RequestedModel, r.CandidateProvider, r.CandidateModel,
		r.CandidateRouteOrigin, r.Attempt, r.Total, r.Reason, r.Status, r.Code,
		r.ErrorPreview, r.ErrorHash, r.NextCandidateProvider, r.NextCandidateModel,
		r.NextCandidateRouteOrigin, b2i(r.IsPrimary), b2i(r.RequestedModelMatched),
		b2i(r.FallbackConfigured), b2i(r.AllowTransientProbe), r.ProfileCount,
		prev, r.ConsoleMessage, r.FallbackStepType,
		r.FallbackStepFromModel, r.FallbackStepToModel, r.FallbackStepFromReason,
		r.FallbackStepFromDetail, r.FallbackStepChainPosition, r.FallbackStepFinalOutcome)
}
