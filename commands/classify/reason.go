package classify

import "fmt"

// Reason is why a provider call failed, as far as failover is concerned.
// The set and the spellings are frozen (POLICY.md "Reasons, status,
// disposition"; reference §1): they are written into events and logs.
type Reason string

// The sixteen reasons, in the reference order (reference §1).
const (
	// ReasonAuth is a credential the provider did not accept (401/403,
	// "invalid api key", expired OAuth token). The profile cools down.
	ReasonAuth Reason = "auth"
	// ReasonAuthPermanent is a high-confidence revocation: key revoked or
	// deactivated, workspace/organisation disabled, refresh token reused.
	// The profile is disabled (10 min doubling, cap 1 h).
	ReasonAuthPermanent Reason = "auth_permanent"
	// ReasonFormat is a request the provider rejects as malformed; retrying
	// the same payload fails the same way.
	ReasonFormat Reason = "format"
	// ReasonRateLimit is a retryable quota or throttle: 429, RESOURCE_EXHAUSTED,
	// periodic usage windows, organisation spend limits on a 402.
	ReasonRateLimit Reason = "rate_limit"
	// ReasonOverloaded is provider-side capacity trouble (529, "overloaded",
	// "high demand", Bedrock serviceUnavailableException).
	ReasonOverloaded Reason = "overloaded"
	// ReasonBilling is a credit or payment problem (402 by default,
	// "insufficient credits", "credit balance is too low").
	ReasonBilling Reason = "billing"
	// ReasonServerError is a provider 5xx or a provider-completed error
	// finish reason.
	ReasonServerError Reason = "server_error"
	// ReasonTimeout is a transport-shaped failure: timeouts, resets,
	// premature closes, 408/499/504/522/524.
	ReasonTimeout Reason = "timeout"
	// ReasonTLSCertificate is a TLS certificate verification failure with no
	// HTTP status (the request never reached the provider).
	ReasonTLSCertificate Reason = "tls_certificate"
	// ReasonContextOverflow is a request larger than the model's window, or
	// than the provider's per-request quota (see [Ceiling]).
	ReasonContextOverflow Reason = "context_overflow"
	// ReasonModelNotFound is an unknown, retired or inaccessible model id.
	ReasonModelNotFound Reason = "model_not_found"
	// ReasonSessionExpired is a provider-side (CLI) session or conversation
	// that no longer exists.
	ReasonSessionExpired Reason = "session_expired"
	// ReasonEmptyResponse is a failure with no usable message or status, or a
	// successful HTTP response that carried no output.
	ReasonEmptyResponse Reason = "empty_response"
	// ReasonNoErrorDetails is exactly "Unknown error (no error details in
	// response)".
	ReasonNoErrorDetails Reason = "no_error_details"
	// ReasonUnclassified is a failure with text that no rule recognises; the
	// redacted preview is kept in [Evidence.Match].
	ReasonUnclassified Reason = "unclassified"
	// ReasonUnknown is a failure that is not a provider verdict at all: an
	// explicit cancellation or a local coordination error (see
	// [DispositionAbort], [DispositionCoordination]).
	ReasonUnknown Reason = "unknown"
)

var reasonOrder = [...]Reason{
	ReasonAuth, ReasonAuthPermanent, ReasonFormat, ReasonRateLimit,
	ReasonOverloaded, ReasonBilling, ReasonServerError, ReasonTimeout,
	ReasonTLSCertificate, ReasonContextOverflow, ReasonModelNotFound,
	ReasonSessionExpired, ReasonEmptyResponse, ReasonNoErrorDetails,
	ReasonUnclassified, ReasonUnknown,
}

// Reasons returns the sixteen reasons in the reference order (reference §1).
// The slice is a fresh copy.
func Reasons() []Reason {
	out := make([]Reason, len(reasonOrder))
	copy(out, reasonOrder[:])
	return out
}

// ParseReason returns the Reason spelled s, or an error naming s when it is
// not one of the sixteen spellings (matching is exact).
func ParseReason(s string) (Reason, error) {
	for _, r := range reasonOrder {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("classify: unknown reason %q", s)
}

// Valid reports whether r is one of the sixteen reasons.
func (r Reason) Valid() bool {
	_, err := ParseReason(string(r))
	return err == nil
}

// Status is the HTTP-like status the reference maps r to (POLICY.md status
// map, reference §1): billing 402, server_error 500, rate_limit 429,
// overloaded 503, auth 401, auth_permanent 403, timeout 408,
// tls_certificate 502, context_overflow 413, format 400, model_not_found 404,
// session_expired 410. The other reasons have no status and return 0.
func (r Reason) Status() int {
	switch r {
	case ReasonBilling:
		return 402
	case ReasonServerError:
		return 500
	case ReasonRateLimit:
		return 429
	case ReasonOverloaded:
		return 503
	case ReasonAuth:
		return 401
	case ReasonAuthPermanent:
		return 403
	case ReasonTimeout:
		return 408
	case ReasonTLSCertificate:
		return 502
	case ReasonContextOverflow:
		return 413
	case ReasonFormat:
		return 400
	case ReasonModelNotFound:
		return 404
	case ReasonSessionExpired:
		return 410
	}
	return 0
}

// Disposition is what the failover loop may do after a failure
// (POLICY.md "Reasons, status, disposition").
type Disposition string

// The five dispositions.
const (
	// DispositionFailover: the loop may rotate profiles or advance to the
	// next candidate.
	DispositionFailover Disposition = "failover"
	// DispositionCompaction: context overflow; stop the chain and hand back
	// to compaction/retry. A request-size ceiling is failover instead.
	DispositionCompaction Disposition = "compaction"
	// DispositionAbort: an explicit cancellation that is not timeout-shaped;
	// stop and touch no health state.
	DispositionAbort Disposition = "abort"
	// DispositionRefusal: a final provider refusal (content filter, safety
	// block); stop the turn.
	DispositionRefusal Disposition = "refusal"
	// DispositionCoordination: a local lock, takeover or draining error; stop,
	// never a provider fault.
	DispositionCoordination Disposition = "coordination"
)

// Dispositions returns the five dispositions in the order above.
func Dispositions() []Disposition {
	return []Disposition{DispositionFailover, DispositionCompaction, DispositionAbort, DispositionRefusal, DispositionCoordination}
}

// ParseDisposition returns the Disposition spelled s, or an error.
func ParseDisposition(s string) (Disposition, error) {
	for _, d := range Dispositions() {
		if string(d) == s {
			return d, nil
		}
	}
	return "", fmt.Errorf("classify: unknown disposition %q", s)
}
