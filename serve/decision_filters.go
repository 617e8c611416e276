package serve

import (
	"net/http"
	"slices"
	"strings"

	"github.com/fledger/fledger/commands/policy"
	"github.com/fledger/fledger/events"
)

// checkDecisionFilters refuses filters that can match nothing by their
// spelling (an outcome or reason that no record holds), naming what is
// wrong, rather than answering an empty page that reads as "no such
// decisions". The range is checked by parseRange.
func checkDecisionFilters(r *DecisionsRequest) error {
	if r.Outcome != "" && !slices.Contains(policy.Decisions, r.Outcome) {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "outcome %q is not a decision; one of %s", r.Outcome, strings.Join(policy.Decisions, ", "))
	}
	if r.Reason != "" && !events.Reason(r.Reason).Valid() {
		return apiErr(http.StatusBadRequest, CodeInvalidRequest, "reason %q is not a failure reason; one of %s", r.Reason, strings.Join(events.Spellings(events.Reasons), ", "))
	}
	return nil
}
