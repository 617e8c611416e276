package events

import "fmt"

// Reason is why a provider call failed, as far as failover is concerned.
// The set and the spellings are frozen (POLICY "Reasons, status,
// disposition"; reference §1): they are written into events and logs.
// Payload fields tagged enum:"reason" (AttemptFailed.Reason,
// ProfileFailureRecorded.Reason, …) hold one of them, and their schemas
// list [Reasons]. commands/classify and commands/policy use this type and
// these constants; they declare no reasons of their own.
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
	// than the provider's per-request quota (classify's Ceiling).
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
	// redacted preview is kept in the classifier's evidence.
	ReasonUnclassified Reason = "unclassified"
	// ReasonUnknown is a failure that is not a provider verdict at all: an
	// explicit cancellation or a local coordination error (see
	// [DispositionAbort], [DispositionCoordination]).
	ReasonUnknown Reason = "unknown"
)

// Reasons is the failover reason set in the reference order (reference §1):
// the one list every schema enum, classifier and decider agrees with.
// Callers must not modify it.
var Reasons = []Reason{
	ReasonAuth, ReasonAuthPermanent, ReasonFormat, ReasonRateLimit,
	ReasonOverloaded, ReasonBilling, ReasonServerError, ReasonTimeout,
	ReasonTLSCertificate, ReasonContextOverflow, ReasonModelNotFound,
	ReasonSessionExpired, ReasonEmptyResponse, ReasonNoErrorDetails,
	ReasonUnclassified, ReasonUnknown,
}

// ParseReason returns the Reason spelled s, or an error naming s when it is
// not one of the sixteen spellings (matching is exact).
func ParseReason(s string) (Reason, error) { return parseIn("reason", Reasons, s) }

// Spellings returns the members of a closed set ([Reasons],
// [Dispositions]) as the strings payloads and schemas hold.
func Spellings[S ~string](set []S) []string {
	out := make([]string, len(set))
	for i, x := range set {
		out[i] = string(x)
	}
	return out
}

// parseIn returns the member of set spelled s, or an error naming s and
// what the set holds.
func parseIn[S ~string](what string, set []S, s string) (S, error) {
	for _, x := range set {
		if string(x) == s {
			return x, nil
		}
	}
	return "", fmt.Errorf("events: unknown %s %q", what, s)
}

// Valid reports whether r is one of the sixteen reasons.
func (r Reason) Valid() bool {
	_, err := ParseReason(string(r))
	return err == nil
}

// reasonStatus is the HTTP-like status of each reason that has one
// (POLICY status map, reference §1).
var reasonStatus = map[Reason]int{
	ReasonBilling: 402, ReasonServerError: 500, ReasonRateLimit: 429,
	ReasonOverloaded: 503, ReasonAuth: 401, ReasonAuthPermanent: 403,
	ReasonTimeout: 408, ReasonTLSCertificate: 502, ReasonContextOverflow: 413,
	ReasonFormat: 400, ReasonModelNotFound: 404, ReasonSessionExpired: 410,
}

// Status is the HTTP-like status the reference maps r to (POLICY status
// map, reference §1): billing 402, server_error 500, rate_limit 429,
// overloaded 503, auth 401, auth_permanent 403, timeout 408,
// tls_certificate 502, context_overflow 413, format 400, model_not_found 404,
// session_expired 410. The other reasons have no status and return 0.
func (r Reason) Status() int { return reasonStatus[r] }
