package classify

import "github.com/fledger/fledger/events"

// Reason is why a provider call failed, as far as failover is concerned:
// the stored vocabulary [events.Reason] (POLICY.md "Reasons, status,
// disposition"; reference §1). Its sixteen values, their spellings and
// their statuses ([events.Reason.Status]) are defined once, in events.
type Reason = events.Reason

// The sixteen reasons, in the reference order (reference §1); see the
// events constants of the same names for what each means.
const (
	ReasonAuth            = events.ReasonAuth
	ReasonAuthPermanent   = events.ReasonAuthPermanent
	ReasonFormat          = events.ReasonFormat
	ReasonRateLimit       = events.ReasonRateLimit
	ReasonOverloaded      = events.ReasonOverloaded
	ReasonBilling         = events.ReasonBilling
	ReasonServerError     = events.ReasonServerError
	ReasonTimeout         = events.ReasonTimeout
	ReasonTLSCertificate  = events.ReasonTLSCertificate
	ReasonContextOverflow = events.ReasonContextOverflow
	ReasonModelNotFound   = events.ReasonModelNotFound
	ReasonSessionExpired  = events.ReasonSessionExpired
	ReasonEmptyResponse   = events.ReasonEmptyResponse
	ReasonNoErrorDetails  = events.ReasonNoErrorDetails
	ReasonUnclassified    = events.ReasonUnclassified
	ReasonUnknown         = events.ReasonUnknown
)

// Reasons returns the sixteen reasons in the reference order ([events.Reasons]).
// The slice is a fresh copy.
func Reasons() []Reason { return append([]Reason(nil), events.Reasons...) }

// ParseReason returns the Reason spelled s, or an error naming s when it is
// not one of the sixteen spellings (matching is exact).
func ParseReason(s string) (Reason, error) { return events.ParseReason(s) }

// Disposition is what the failover loop may do after a failure: the stored
// vocabulary [events.Disposition] (POLICY.md "Reasons, status, disposition").
type Disposition = events.Disposition

// The five dispositions; see the events constants of the same names.
const (
	DispositionFailover     = events.DispositionFailover
	DispositionCompaction   = events.DispositionCompaction
	DispositionAbort        = events.DispositionAbort
	DispositionRefusal      = events.DispositionRefusal
	DispositionCoordination = events.DispositionCoordination
)

// Dispositions returns the five dispositions ([events.Dispositions]) as a
// fresh copy.
func Dispositions() []Disposition {
	return append([]Disposition(nil), events.Dispositions...)
}

// ParseDisposition returns the Disposition spelled s, or an error.
func ParseDisposition(s string) (Disposition, error) { return events.ParseDisposition(s) }
