package events

// Reasons is the failover reason set, with exactly these spellings (POLICY
// "Reasons, status, disposition"). Payload fields tagged enum:"reason"
// (AttemptFailed.Reason, ProfileFailureRecorded.Reason, …) take one of
// them; their schemas list them.
var Reasons = []string{
	"auth", "auth_permanent", "format", "rate_limit", "overloaded", "billing",
	"server_error", "timeout", "tls_certificate", "context_overflow",
	"model_not_found", "session_expired", "empty_response", "no_error_details",
	"unclassified", "unknown",
}
