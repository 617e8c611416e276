package classify

// ruleInfo names one rule for evidence and documentation. Every rule the
// classifier can cite is defined here with defRule, in evaluation order;
// docs/classification.md lists the same ids (a test keeps them in step).
type ruleInfo struct {
	id     string // stable id, e.g. "msg13.rate_limit"
	source string // "ref §2.2 rule 13", "seed 000 …", "POLICY …", "fledger (RE-…)"
}

var ruleBook []*ruleInfo

func defRule(id, source string) *ruleInfo {
	r := &ruleInfo{id: id, source: source}
	ruleBook = append(ruleBook, r)
	return r
}

// RuleIDs returns every rule id the classifier can put in [Evidence.Rule],
// in evaluation order.
func RuleIDs() []string {
	out := make([]string, len(ruleBook))
	for i, r := range ruleBook {
		out[i] = r.id
	}
	return out
}

// Chain-level rules (the error graph, reference §2.7).
var (
	ruleCoordination = defRule("chain.coordination", "ref §2.7 (coordination bucket), §12; POLICY disposition")
)

// Signal-level rules, per error in the chain (reference §2.1).
var (
	rulePluginOpenRouterKeyLimit = defRule("plugin.openrouter.key_limit", "ref §2.6 OpenRouter; seed 000 Billing disables")
	rulePluginTogether           = defRule("plugin.together.concurrency", "ref §2.6 Together")
	rulePluginXAIBilling         = defRule("plugin.xai.billing", "ref §2.6 xAI")
	rulePluginXAIRate            = defRule("plugin.xai.rate_limit", "ref §2.6 xAI")
	rulePluginXAIInternal        = defRule("plugin.xai.internal", "ref §2.6 xAI")
	rulePluginOllamaOverflow     = defRule("plugin.ollama.overflow", "ref §2.6 Ollama")
	rulePluginOllamaStreamEnd    = defRule("plugin.ollama.stream_end", "ref §2.6 Ollama")
	rulePluginOpenRouterProvider = defRule("plugin.openrouter.provider_returned_error", "ref §2.6 OpenRouter; seed 000 (only when provider is openrouter); fledger: only when the wrapped raw error says nothing (RE-041)")
	ruleTLS                      = defRule("signal.tls", "ref §2.1 step 4")
	ruleHTML                     = defRule("signal.html", "ref §2.1 step 5")
	ruleCode                     = defRule("code.table", "ref §2.1 step 6; fledger additions in codes.go")
	ruleType                     = defRule("type.table", "ref §2.1 step 7, §2.2 rule 28; fledger additions in codes.go")
	ruleCeiling                  = defRule("signal.ceiling", "POLICY request-size ceiling; seed 000 Which errors advance fallback")
)

// Message rules, first match wins (reference §2.2).
var (
	ruleMsgImageDimension    = defRule("msg01.image_dimension", "ref §2.2 rule 1")
	ruleMsgUnsupportedImage  = defRule("msg02.unsupported_image", "ref §2.2 rule 2")
	ruleMsgClaudeCLIAuth     = defRule("msg03.claude_cli_auth", "ref §2.2 rule 3")
	ruleMsgTranscript        = defRule("msg04.transcript_invalid", "ref §2.2 rule 4")
	ruleMsgSession           = defRule("msg05.session_expired", "ref §2.2 rule 5")
	ruleMsgModelNotFound     = defRule("msg06.model_not_found", "ref §2.2 rule 6")
	ruleMsgLegacy            = defRule("msg07.legacy_provider", "ref §2.2 rule 7; seed 000 (workers_ai, ModelNotReadyException)")
	ruleMsgOverflow          = defRule("msg08.context_overflow", "ref §2.2 rule 8, §2.5 Context overflow; seed 000 Does not continue on")
	ruleMsgOverflowShape     = defRule("msg08.context_overflow_shape", "fledger (issue 17): structural overflow shapes (count/subject exceeds limit, sum bounds, n_keep >= n_ctx, input-length range); ref §2.2 rule 8")
	ruleMsgReplay            = defRule("msg09.replay_invalid", "ref §2.2 rule 9")
	ruleMsg402               = defRule("msg10.402_text", "ref §2.2 rule 10, §2.4; seed 000 Billing disables")
	ruleMsgBilling           = defRule("msg11.billing", "ref §2.2 rule 11, §2.5 billing; seed 000 Billing disables")
	ruleMsgPeriodic          = defRule("msg12.periodic_limit", "ref §2.2 rule 12; seed 000 rate-limit bucket")
	ruleMsgRateLimit         = defRule("msg13.rate_limit", "ref §2.2 rule 13, §2.5 rate_limit; seed 000 rate-limit bucket")
	ruleMsgOverloaded        = defRule("msg14.overloaded", "ref §2.2 rule 14, §2.5 overloaded")
	ruleMsgFinishError       = defRule("msg15.finish_reason_error", "ref §2.2 rule 15; seed 000 provider-completed stop reasons")
	ruleMsgStructuredServer  = defRule("msg16.structured_server_error", "ref §2.2 rule 16")
	ruleMsgRuntimeFailure    = defRule("msg16a.runtime_failure", "fledger (issue 17 second blind set): the serving runtime ran out of memory or crashed → server_error, as rule 16")
	ruleMsgGenericInternal   = defRule("msg17.generic_internal", "ref §2.2 rule 17")
	ruleMsgOAuthRefresh      = defRule("msg18.oauth_refresh_permanent", "ref §2.2 rule 18")
	ruleMsgAuthPermanent     = defRule("msg19.auth_permanent", "ref §2.2 rule 19, §2.5 auth_permanent")
	ruleMsgAuth              = defRule("msg20.auth", "ref §2.2 rule 20, §2.5 auth")
	ruleMsgUnknownOccurred   = defRule("msg21.unknown_error_occurred", "ref §2.2 rule 21; seed 000 (An unknown error occurred)")
	ruleMsgServerText        = defRule("msg22.server_text", "ref §2.2 rule 22, §2.5 server text")
	ruleMsgAPIErrorTransient = defRule("msg23.api_error_transient", "ref §2.2 rule 23; seed 000 (api_error payloads)")
	ruleMsgFormat            = defRule("msg24.format", "ref §2.2 rule 24, §2.5 format")
	ruleMsgNoErrorDetails    = defRule("msg25.no_error_details", "ref §2.2 rule 25; POLICY Reasons")
	ruleMsgTimeout           = defRule("msg26.timeout", "ref §2.2 rule 26, §2.5 timeout; seed 000 timeout bucket")
	ruleMsgAssistantOverflow = defRule("msg27.assistant_overflow", "ref §2.2 rule 27")
	ruleMsgType              = defRule("msg28.json_type", "ref §2.2 rule 28")
	ruleMsgEmptyResponse     = defRule("msg28a.empty_response", "fledger (RE-131); seed 000 (empty_response: no usable message)")
	ruleMsgLeadingStatus     = defRule("msg29.leading_status", "ref §2.2 rule 29")
	ruleMsgRetryHint         = defRule("msg29a.retry_hint", "fledger (issue 17 third blind set): a stated delay (\"try again in 7m12s\", \"retry after 20 seconds\") and nothing else classified: a throttle; seed 000 rate-limit bucket")
)

// Status rules (reference §2.3).
var (
	ruleStatus402       = defRule("status.402", "ref §2.3 402, §2.4; seed 000 Billing disables")
	ruleStatus429       = defRule("status.429", "ref §2.3 429")
	ruleStatus429Over   = defRule("status.429_overloaded", "fledger (RE-008): overload text under 429")
	ruleStatusAuth      = defRule("status.401_403", "ref §2.3 401/403")
	ruleStatus408       = defRule("status.408", "ref §2.3 408")
	ruleStatus410       = defRule("status.410", "ref §2.3 410")
	ruleStatus404       = defRule("status.404", "ref §2.3 404; seed 000 Model fallback")
	ruleStatus529       = defRule("status.529", "ref §2.3 529")
	ruleStatus5xx       = defRule("status.5xx", "ref §2.3 499/5xx; ref §14 (bare 5xx is server_error)")
	ruleStatus400       = defRule("status.400_422", "ref §2.3 400/422; seed 004 (no body is not format)")
	ruleStatus413       = defRule("status.413", "fledger: bare 413 is context_overflow (POLICY status map)")
	ruleStatus2xx       = defRule("status.2xx", "fledger (RE-152, RE-153): a 2xx failure carried no output")
	ruleCodeBeatsStatus = defRule("code.beats_status", "POLICY (provider-specific codes beat the outer HTTP status)")
)

// Chain-level conclusions, after the walk (reference §2.7 steps 4–5).
var (
	ruleNoBodyNested = defRule("chain.no_body_nested", "ref §2.7 step 4")
	ruleTimeoutName  = defRule("chain.timeout_name", "ref §2.7 step 5")
	ruleAbort        = defRule("chain.abort", "ref §2.7 step 5, §12; seed 004 (cancellation)")
	ruleEmpty        = defRule("chain.empty_response", "POLICY Reasons (no message, no status, no code)")
	ruleUnclassified = defRule("chain.unclassified", "POLICY Reasons (raw preview kept, redacted)")
)

// Disposition rules.
var (
	ruleRefusalCode = defRule("disposition.refusal_code", "POLICY disposition refusal; seed 000 final provider refusals")
	ruleRefusalText = defRule("disposition.refusal_text", "POLICY disposition refusal; seed 000 final provider refusals")
)
