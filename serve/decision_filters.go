package serve

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// decisionOutcomes are the values a decision record's `decision` field
// takes: what GET /v1/decisions?outcome= may name.
var decisionOutcomes = []string{policy.DecisionCandidateFailed, policy.DecisionSkipCandidate,
	policy.DecisionProbeCandidate, policy.DecisionCandidateSucceeded, policy.DecisionLiveSwitch}

// checkDecisionFilters refuses filters that can match nothing by their
// spelling (an outcome or reason that no record holds) and a range that
// ends before it starts, naming what is wrong, rather than answering an
// empty page that reads as "no such decisions".
func checkDecisionFilters(r *DecisionsRequest, since, until time.Time) error {
	if r.Outcome != "" && !slices.Contains(decisionOutcomes, r.Outcome) {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "outcome %q is not a decision; one of %s", r.Outcome, strings.Join(decisionOutcomes, ", "))
	}
	if r.Reason != "" && !events.Reason(r.Reason).Valid() {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "reason %q is not a failure reason; one of %s", r.Reason, strings.Join(events.Spellings(events.Reasons), ", "))
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "until %s is before since %s", until.UTC().Format(time.RFC3339Nano), since.UTC().Format(time.RFC3339Nano))
	}
	return nil
}
