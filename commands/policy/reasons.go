package policy

import (
	"strings"

	"github.com/fledger/fledger/events"
)

// Failover reasons: the stored vocabulary [events.Reason], defined once in
// events (POLICY "Reasons, status, disposition", reference §1) and spelt
// here as the plain strings the payload and state fields the decider reads
// hold (TestVocabulary_PolicyReasonsAreTheEventsSet checks the two agree).
const (
	ReasonAuth            = string(events.ReasonAuth)
	ReasonAuthPermanent   = string(events.ReasonAuthPermanent)
	ReasonFormat          = string(events.ReasonFormat)
	ReasonRateLimit       = string(events.ReasonRateLimit)
	ReasonOverloaded      = string(events.ReasonOverloaded)
	ReasonBilling         = string(events.ReasonBilling)
	ReasonServerError     = string(events.ReasonServerError)
	ReasonTimeout         = string(events.ReasonTimeout)
	ReasonTLSCertificate  = string(events.ReasonTLSCertificate)
	ReasonContextOverflow = string(events.ReasonContextOverflow)
	ReasonModelNotFound   = string(events.ReasonModelNotFound)
	ReasonSessionExpired  = string(events.ReasonSessionExpired)
	ReasonEmptyResponse   = string(events.ReasonEmptyResponse)
	ReasonNoErrorDetails  = string(events.ReasonNoErrorDetails)
	ReasonUnclassified    = string(events.ReasonUnclassified)
	ReasonUnknown         = string(events.ReasonUnknown)
)

// Dispositions: what the failover loop may do after a classified failure,
// the stored vocabulary [events.Disposition] spelt as plain strings.
const (
	DispositionFailover     = string(events.DispositionFailover)
	DispositionCompaction   = string(events.DispositionCompaction)
	DispositionAbort        = string(events.DispositionAbort)
	DispositionRefusal      = string(events.DispositionRefusal)
	DispositionCoordination = string(events.DispositionCoordination)
)

// reasonSet is a small set of reasons.
type reasonSet []string

func (s reasonSet) has(r string) bool {
	for _, x := range s {
		if x == r {
			return true
		}
	}
	return false
}

var (
	// POLICY "Cooldowns and disables": reasons that never touch shared
	// profile health; no_error_details is not recorded either (reference
	// §3 markAuthProfileFailure).
	healthNeutral = reasonSet{ReasonOverloaded, ReasonServerError, ReasonTLSCertificate,
		ReasonEmptyResponse, ReasonContextOverflow, ReasonFormat, ReasonNoErrorDetails}
	// Reference §4: inline config API keys record only these.
	inlineRecorded = reasonSet{ReasonAuth, ReasonAuthPermanent, ReasonBilling}
	// POLICY / reference §3: cooldowns of these record cooldownModel.
	modelScoped = reasonSet{ReasonRateLimit, ReasonTimeout, ReasonModelNotFound}
	// Reference §9: same-model transient retry reasons (output_limit is not
	// in fledger's reason set).
	retryable = reasonSet{ReasonRateLimit, ReasonOverloaded, ReasonServerError, ReasonTimeout}
	// Seed 000 "Session stickiness" note: same-provider profile rotation on
	// auth failures, rate limits, billing limits, timeouts, and overloads
	// (seed 000 "Billing disables" last paragraph).
	rotatable = reasonSet{ReasonAuth, ReasonAuthPermanent, ReasonBilling, ReasonRateLimit,
		ReasonOverloaded, ReasonTimeout}
	// Reference §7 step 5: reasons a non-primary sibling may probe through
	// (one transient probe per provider per run).
	transientProbe = reasonSet{ReasonRateLimit, ReasonOverloaded, ReasonUnknown, ReasonEmptyResponse,
		ReasonNoErrorDetails, ReasonUnclassified, ReasonTimeout}
	// Reference §7 step 5: a probe that failed with one of these gives the
	// transient probe slot back.
	probeSlotReleased = reasonSet{ReasonModelNotFound, ReasonFormat, ReasonAuth, ReasonAuthPermanent,
		ReasonSessionExpired, ReasonTLSCertificate}
	// Reference §1 usage-state priority: ties in the unavailable-reason
	// score go to the earlier entry.
	unavailablePriority = reasonSet{ReasonAuthPermanent, ReasonAuth, ReasonSessionExpired, ReasonBilling,
		ReasonFormat, ReasonModelNotFound, ReasonOverloaded, ReasonTimeout, ReasonRateLimit,
		ReasonEmptyResponse, ReasonNoErrorDetails, ReasonUnclassified, ReasonUnknown}
)

// DefaultDisposition is the disposition of a reason when the classifier
// gave none: context_overflow without a request-size ceiling stays inside
// compaction, everything else may fail over (POLICY).
func DefaultDisposition(reason string, requestSizeCeiling bool) string {
	if reason == ReasonContextOverflow && !requestSizeCeiling {
		return DispositionCompaction
	}
	return DispositionFailover
}

// humanReason turns a reason into words for notices: underscores become
// spaces (reference §10 reasonSummary).
func humanReason(r string) string { return strings.ReplaceAll(r, "_", " ") }
