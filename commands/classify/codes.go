package classify

import "strings"

// Structured codes, API error types and error names, as data.
//
// Codes are compared after normCode: upper case with every non-alphanumeric
// byte removed, so "THROTTLING_EXCEPTION", "ThrottlingException" and
// "throttlingException" are one key.

func normCode(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// codeReasons: the code verdict (ref §2.1 step 6), plus fledger additions.
var codeReasons = map[string]Reason{
	// ref §2.1 step 6.
	"UNKNOWNPARAMETER":               ReasonFormat,
	"RESOURCEEXHAUSTED":              ReasonRateLimit, // gRPC/Gemini
	"RATELIMIT":                      ReasonRateLimit,
	"RATELIMITED":                    ReasonRateLimit,
	"RATELIMITEXCEEDED":              ReasonRateLimit, // OpenAI/Groq rate_limit_exceeded; Google rateLimitExceeded
	"TOOMANYREQUESTS":                ReasonRateLimit,
	"THROTTLED":                      ReasonRateLimit,
	"THROTTLING":                     ReasonRateLimit,
	"THROTTLINGEXCEPTION":            ReasonRateLimit, // Bedrock
	"DEACTIVATEDWORKSPACE":           ReasonAuthPermanent,
	"SELECTEDAUTHPROFILEUNAVAILABLE": ReasonAuth,
	"OVERLOADED":                     ReasonOverloaded,
	"OVERLOADEDERROR":                ReasonOverloaded,
	// Transport codes (Node errno, undici) are timeouts.
	"EHOSTDOWN": ReasonTimeout, "ENETRESET": ReasonTimeout, "ERRSTREAMPREMATURECLOSE": ReasonTimeout,
	"ETIMEDOUT": ReasonTimeout, "ECONNRESET": ReasonTimeout, "ECONNREFUSED": ReasonTimeout,
	"ECONNABORTED": ReasonTimeout, "ENETUNREACH": ReasonTimeout, "EHOSTUNREACH": ReasonTimeout,
	"ESOCKETTIMEDOUT": ReasonTimeout, "EPIPE": ReasonTimeout, "ENOTFOUND": ReasonTimeout,
	"EAIAGAIN": ReasonTimeout, "UNDERRSOCKET": ReasonTimeout, "UNDERRCONNECTTIMEOUT": ReasonTimeout,
	"UNDERRHEADERSTIMEOUT": ReasonTimeout, "UNDERRBODYTIMEOUT": ReasonTimeout, "UNDERRCLOSED": ReasonTimeout,
	// fledger additions: structured codes that say more than the status.
	"ACCOUNTDEACTIVATED":           ReasonAuthPermanent,   // OpenAI (RE-089, RE-090)
	"REFRESHTOKENREUSED":           ReasonAuthPermanent,   // OpenAI Codex OAuth (RE-125)
	"INVALIDGRANT":                 ReasonAuthPermanent,   // RFC 6749 refresh rejection
	"INSUFFICIENTQUOTA":            ReasonBilling,         // OpenAI (RE-010, RE-011)
	"SERVICEUNAVAILABLEEXCEPTION":  ReasonOverloaded,      // Bedrock event stream (RE-059; POLICY example)
	"MODELNOTREADYEXCEPTION":       ReasonOverloaded,      // Bedrock (seed 000 "Provider-busy signals")
	"RATELIMITERROR":               ReasonRateLimit,       // Anthropic type sent as code (RE-085..087)
	"APIKEYINVALID":                ReasonAuth,            // Google ErrorInfo reason (RE-028)
	"INVALIDAPIKEY":                ReasonAuth,            // OpenAI (RE-017)
	"CONTEXTLENGTHEXCEEDED":        ReasonContextOverflow, // OpenAI (RE-015, RE-016)
	"MODELNOTFOUND":                ReasonModelNotFound,   // OpenAI (RE-070, RE-071)
	"REQUESTLIMITEXCEEDED":         ReasonRateLimit,       // Tencent Cloud / Hunyuan RequestLimitExceeded
	"RATELIMITREACHED":             ReasonRateLimit,       // gateways
	"MODELMAXPROMPTTOKENSEXCEEDED": ReasonContextOverflow, // fledger (issue 17 second blind set): GitHub Copilot
}

// transportCodes are the code verdicts that never override an HTTP status
// (a status means the request did reach the provider).
func transportReason(r Reason) bool { return r == ReasonTimeout }

// typeReasons: the API error type verdict (ref §2.1 step 7 and §2.2 rule
// 28), plus fledger additions that complete the Anthropic/OpenAI type sets.
// Types are a fallback: they only decide when no message rule did.
var typeReasons = map[string]Reason{
	"invalid_request_error": ReasonFormat,
	"server_error":          ReasonServerError,
	"upstream_error":        ReasonServerError,
	"overloaded_error":      ReasonOverloaded,
	// fledger additions.
	"rate_limit_error":        ReasonRateLimit,       // Anthropic
	"authentication_error":    ReasonAuth,            // Anthropic
	"permission_error":        ReasonAuth,            // Anthropic
	"not_found_error":         ReasonModelNotFound,   // Anthropic
	"billing_error":           ReasonBilling,         // Anthropic
	"insufficient_quota":      ReasonBilling,         // OpenAI
	"request_too_large":       ReasonContextOverflow, // Anthropic 413
	"timeout_error":           ReasonTimeout,
	"too_many_requests_error": ReasonRateLimit, // Cerebras (RE-104)
	// fledger (issue 17 second blind set): local servers' types.
	"unavailable_error": ReasonOverloaded, // llama.cpp server ERROR_TYPE_UNAVAILABLE: 503 while the model loads
	"template_error":    ReasonFormat,     // TGI error_type: the chat template rejected the conversation
}

func typeReason(t string) Reason {
	if r, ok := typeReasons[strings.ToLower(strings.TrimSpace(t))]; ok {
		return r
	}
	if len(t) > 64 {
		return ""
	}
	return coinedTypes[normCode(t)]
}

// coinedTypes: error types that apps and gateways coin for a provider
// failure and put in their own type field (fledger, issue 17 second blind
// set), compared like codes: LobeChat/lobehub's errorType values
// (InvalidProviderAPIKey, ExceededContextWindow, QuotaLimitReached,
// InsufficientQuota, ModelNotFound, PermissionDenied,
// LocationNotSupportError, OllamaServiceUnavailable, InvalidOllamaArgs),
// Volcengine Ark's type BadRequest.
var coinedTypes = map[string]Reason{
	"INVALIDPROVIDERAPIKEY":     ReasonAuth,
	"NOOPENAIAPIKEY":            ReasonAuth,
	"INVALIDACCESSCODE":         ReasonAuth,
	"INVALIDBEDROCKCREDENTIALS": ReasonAuth,
	"PERMISSIONDENIED":          ReasonAuth,
	"LOCATIONNOTSUPPORTERROR":   ReasonAuth,
	"EXCEEDEDCONTEXTWINDOW":     ReasonContextOverflow,
	"QUOTALIMITREACHED":         ReasonRateLimit,
	"INSUFFICIENTQUOTA":         ReasonBilling,
	"MODELNOTFOUND":             ReasonModelNotFound,
	"OLLAMASERVICEUNAVAILABLE":  ReasonTimeout,
	"INVALIDOLLAMAARGS":         ReasonFormat,
	"BADREQUEST":                ReasonFormat,
}

// looksLikeType: a code that is really an API error type ("…_error"), as
// SDKs and bug reports often put the type in the code field.
func looksLikeType(code string) bool {
	c := strings.ToLower(code)
	return strings.HasSuffix(c, "_error") || c == "insufficient_quota" || c == "request_too_large"
}

// tlsCodes: Node's certificate error codes (ref §2.1 step 4).
var tlsCodes = map[string]bool{
	"CERTHASEXPIRED": true, "UNABLETOVERIFYLEAFSIGNATURE": true, "DEPTHZEROSELFSIGNEDCERT": true,
	"SELFSIGNEDCERTINCHAIN": true, "ERRTLSCERTALTNAMEINVALID": true, "UNABLETOGETISSUERCERTLOCALLY": true,
	"UNABLETOGETISSUERCERT": true, "CERTNOTYETVALID": true, "CERTUNTRUSTED": true, "CERTREJECTED": true,
}

// refusalCodes: structured refusal markers (POLICY disposition "refusal").
var refusalCodes = map[string]bool{
	"CONTENTFILTER":                true, // Azure OpenAI (RE-067, RE-068)
	"CONTENTPOLICYVIOLATION":       true, // OpenAI images
	"RESPONSIBLEAIPOLICYVIOLATION": true, // Azure innererror
	"SAFETY":                       true, // Gemini block_reason / finish_reason (RE-152)
	"PROHIBITEDCONTENT":            true, // Gemini
	"BLOCKLIST":                    true, // Gemini
	"SPII":                         true, // Gemini
	"IMAGESAFETY":                  true, // Gemini
	"REFUSAL":                      true, // Anthropic stop_reason
	"GUARDRAILINTERVENED":          true, // Bedrock Guardrails
	// fledger (issue 17 blind set): more documented moderation codes.
	"MODERATIONBLOCKED":      true, // OpenAI images / Codex image generation "rejected by the safety system"
	"IMAGEPROHIBITEDCONTENT": true, // Gemini image FinishReason
	"SAFETYVIOLATION":        true, // gateways
	"CONTENTFILTERED":        true, // gateways
}

// refusalCodeLike: a code-shaped value (a code, reason or type field) whose
// words name a moderation block, the way providers coin them: Google's
// ErrorInfo reason PUBLIC_ERROR_UNSAFE_GENERATION (and other *_UNSAFE_*),
// Volcengine Ark InputTextSensitiveContentDetected, a gateway's
// content_policy_violation or moderation_flagged. Words are split at
// separators and lower-to-upper case changes. A code about safety
// *settings* ("INVALID_SAFETY_SETTING") is a bad request, not a refusal.
func refusalCodeLike(code string) bool {
	code = strings.TrimSpace(code)
	if code == "" || len(code) > 64 || strings.ContainsAny(code, " \t\n") {
		return false
	}
	if refusalCodes[normCode(code)] {
		return true
	}
	var w [8]string
	n := codeWords(code, w[:])
	has := func(words ...string) bool {
		for _, x := range w[:n] {
			for _, y := range words {
				if x == y {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("invalid", "setting", "settings", "threshold", "thresholds", "config"):
		return false
	case has("unsafe"), has("safety"):
		return true
	case has("moderation") && has("blocked", "flagged", "rejected", "violation", "failed"):
		return true
	case has("sensitive") && has("content", "words", "word", "detected"):
		return true
	case has("content") && has("filter", "filtered", "blocked", "violation", "prohibited"):
		return true
	case has("policy") && has("violation") && has("content", "usage", "safety", "ai"):
		return true
	case has("illegal") && has("detected", "content", "text", "image", "prompt", "input", "output"):
		return true // Tencent Hunyuan OperationDenied.TextIllegalDetected, Novita ILLEGAL_PROMPT
	}
	return false
}

// codeWords splits a code into at most len(out) lower-case words at
// separators and lower-to-upper case changes ("InputTextSensitive" → input,
// text, sensitive); it returns how many.
func codeWords(code string, out []string) int {
	n, start := 0, 0
	flush := func(end int) {
		if end > start && n < len(out) {
			out[n] = strings.ToLower(code[start:end])
			n++
		}
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch {
		case !alnum:
			flush(i)
			start = i + 1
		case c >= 'A' && c <= 'Z' && i > start && code[i-1] >= 'a' && code[i-1] <= 'z':
			flush(i)
			start = i
		}
	}
	flush(len(code))
	return n
}

// coordinationNames: local lock, claim and draining errors; the failover
// loop stops and no provider is blamed (ref §2.7 resolveModelFallbackError
// "coordination"; ref §12).
var coordinationNames = map[string]bool{
	"AgentHarnessSessionSupersededError":       true,
	"GatewayDrainingError":                     true,
	"WorkerRunnerUnavailableError":             true,
	"WorkerRunnerCapacityError":                true,
	"WorkerWorkspaceReconciliationError":       true,
	"ActiveTurnClaimError":                     true,
	"SessionTranscriptWriterClaimReboundError": true,
	"StaleRunLifecycleError":                   true,
	"HarnessPreflightError":                    true,
	"MissingToolResultError":                   true,
	"SessionWriteLockTimeoutError":             true, // seed 004: session write-lock timeouts
	"EmbeddedAttemptTakeoverError":             true, // seed 004: embedded-attempt takeover
	NameCoordination:                           true,
}

// Error names with a meaning of their own (ref §2.7 step 5).
const (
	// NameAbort marks an explicit cancellation ([FromError] sets it for
	// context.Canceled). Without timeout evidence it is [DispositionAbort].
	NameAbort = "AbortError"
	// NameTimeout marks a timeout ([FromError] sets it for
	// context.DeadlineExceeded and net.Error timeouts).
	NameTimeout = "TimeoutError"
	// NameCoordination marks a local coordination error not in the list of
	// known names ([FromError] sets it for errors with Coordination() true).
	NameCoordination = "CoordinationError"
)
