package classify

import (
	"regexp"
	"strconv"
	"strings"
)

// Provider code tables (issue 17: "per-provider code tables taken from
// their documentation").
//
// A provider's own machine-readable code is better evidence than an outer
// HTTP status, a wrapper's text or a phrase heuristic: it is how the
// provider itself names the failure. Each row below is one documented code,
// with the document it comes from. A row is one of:
//
//   - definitive: the code names one condition (arrears, a refused prompt,
//     a retired model). It decides the reason over the message rules and
//     the status (rule code.provider.<family>), except that a context
//     overflow read from the text, or a request-size ceiling, still wins;
//   - generic (weak: true): a class such as InvalidParameter or
//     ValidationException. It decides only when no message rule did, like
//     an API error type (rule code.generic);
//   - refusal (refusal: true): a moderation block; it sets the refusal
//     disposition and, when reason is set, also the reason.
//
// Spellings are compared after normCode (upper case, separators dropped).
// Alphabetic codes are distinctive enough to apply whatever the provider
// field says (they also appear inside wrappers that name another provider).
// Numeric business codes collide across providers (Zhipu 1300 is a policy
// block, Mistral "1300" a rate limit), so numeric rows are scoped to a
// provider family (providerFamilyOf). Where a code is quoted in text rather
// than a JSON field ("<400> InternalError.Algo.InvalidParameter: …",
// "An error occurred (ValidationException) when calling …") the same table
// decides, word-bounded, as a text code.

type codeRow struct {
	family  string // "" = any provider; else a providerFamilies id (numeric codes)
	codes   []string
	reason  Reason
	refusal bool
	weak    bool
	// own: the row counts only for errors of its table's own provider,
	// in a code field (not in text): a spelling another table already
	// documents for every provider (OpenAI's invalid_api_key is
	// DashScope's InvalidApiKey) is credited to the sender's table without
	// widening what decides for the others.
	own bool
}

// Provider families with their own documentation rule ids. The rule's
// source names the document.
var (
	ruleCodeDashScope  = defRule("code.provider.dashscope", "DashScope / Alibaba Model Studio status codes: help.aliyun.com/zh/model-studio/error-code, help.aliyun.com/zh/dashscope/return-status-code-description")
	ruleCodeZhipu      = defRule("code.provider.zhipu", "Zhipu BigModel / Z.ai business error codes: docs.bigmodel.cn/cn/api/api-code, docs.z.ai/api-reference/api-code")
	ruleCodeMoonshot   = defRule("code.provider.moonshot", "Moonshot / Kimi API error types: platform.moonshot.ai docs, kimi.com/help/kimi-api/api-error-codes, kimi.com/code/docs error reference")
	ruleCodeBedrock    = defRule("code.provider.bedrock", "Amazon Bedrock runtime exceptions: docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html")
	ruleCodeAzure      = defRule("code.provider.azure", "Azure OpenAI error codes: learn.microsoft.com Azure OpenAI content filtering and REST error reference")
	ruleCodeGemini     = defRule("code.provider.gemini", "Gemini API / Vertex AI backend error codes: ai.google.dev/gemini-api/docs/troubleshooting, google.rpc ErrorInfo reasons")
	ruleCodeGroq       = defRule("code.provider.groq", "Groq API error codes: console.groq.com/docs/errors, console.groq.com/docs/flex-processing, console.groq.com/docs/deprecations")
	ruleCodeTogether   = defRule("code.provider.together", "Together AI error codes: docs.together.ai/docs/error-codes")
	ruleCodeCopilot    = defRule("code.provider.copilot", "GitHub Copilot API error bodies (api.githubcopilot.com): code model_not_supported")
	ruleCodeMistral    = defRule("code.provider.mistral", "Mistral API error glossary: docs.mistral.ai/resources/error-glossary")
	ruleCodeOpenAI     = defRule("code.provider.openai", "OpenAI API error codes: platform.openai.com/docs/guides/error-codes")
	ruleCodeAnthropic  = defRule("code.provider.anthropic", "Anthropic API errors: docs.claude.com/en/api/errors")
	ruleCodeMiniMax    = defRule("code.provider.minimax", "MiniMax API error codes: platform.minimax.io/docs/api-reference/errorcode")
	ruleCodeCloudflare = defRule("code.provider.cloudflare", "Cloudflare Workers AI error codes: developers.cloudflare.com/workers-ai/platform/errors")
	ruleCodeLlamaCpp   = defRule("code.provider.llamacpp", "llama.cpp server error types: ggml-org/llama.cpp server (exceed_context_size_error)")
	ruleCodeGeneric    = defRule("code.generic", "provider documentation: generic invalid-request/internal classes; decides only when no message rule did (like an API type)")
)

// codeTables maps each documentation rule to its rows.
var codeTables = []struct {
	rule *ruleInfo
	rows []codeRow
}{
	{ruleCodeDashScope, []codeRow{
		// help.aliyun.com/zh/model-studio/error-code: 400 Arrearage "Access
		// denied, please make sure your account is in good standing" — the
		// account is in arrears.
		{codes: []string{"Arrearage"}, reason: ReasonBilling},
		// 403 AllocationQuota.FreeTierOnly: the free tier is exhausted and
		// "free tier only" mode blocks paid use ("continue … on a paid basis").
		{codes: []string{"AllocationQuota.FreeTierOnly"}, reason: ReasonBilling},
		// 400 DataInspectionFailed / data_inspection_failed: input or output
		// "may contain inappropriate content" (green-net moderation).
		{codes: []string{"DataInspectionFailed", "data_inspection_failed", "InternalError.Algo.DataInspectionFailed"}, refusal: true},
		// 429 Throttling, Throttling.RateQuota (RPM), Throttling.AllocationQuota
		// (TPM), Throttling.BurstRate ("Request rate increased too quickly").
		{codes: []string{"Throttling.RateQuota", "Throttling.AllocationQuota", "Throttling.BurstRate", "Throttling.User"}, reason: ReasonRateLimit},
		// 401 InvalidApiKey; 403 AccessDenied.Unpurchased (the model is not
		// activated for the account).
		{codes: []string{"InvalidApiKey"}, reason: ReasonAuth},
		{codes: []string{"AccessDenied.Unpurchased"}, reason: ReasonAuth},
		// 404 ModelNotFound; 400 "Model not exist" (ModelNotExist).
		{codes: []string{"ModelNotFound", "ModelNotExist", "model_not_exist"}, reason: ReasonModelNotFound},
		// 408 RequestTimeOut; 413 BadRequest.TooLarge.
		{codes: []string{"RequestTimeOut"}, reason: ReasonTimeout},
		{codes: []string{"BadRequest.TooLarge"}, reason: ReasonContextOverflow},
		// 400 InvalidParameter (and InternalError.Algo.InvalidParameter, the
		// algorithm layer's spelling), invalid_parameter_error (compatible
		// mode), BadRequest.Empty*, InvalidURL, UnsupportedOperation: a bad
		// request. Generic: a message rule (an input-length range is a
		// context overflow) says more.
		{codes: []string{"InvalidParameter", "InternalError.Algo.InvalidParameter", "invalid_parameter_error", "BadRequest.EmptyInput", "BadRequest.EmptyParameters", "BadRequest.EmptyModel", "InvalidURL", "UnsupportedOperation"}, reason: ReasonFormat, weak: true},
		// 500 InternalError, InternalError.Algo.
		{codes: []string{"InternalError", "InternalError.Algo"}, reason: ReasonServerError, weak: true},
	}},
	{ruleCodeZhipu, []codeRow{
		// docs.bigmodel.cn/cn/api/api-code (docs.z.ai/api-reference/api-code).
		// 1000–1004: authentication failed / token missing, invalid, expired.
		{family: "zhipu", codes: []string{"1000", "1001", "1002", "1003", "1004"}, reason: ReasonAuth},
		// 1110 account inactive, 1111 account does not exist, 1220 no
		// permission for the API.
		{family: "zhipu", codes: []string{"1110", "1111", "1220"}, reason: ReasonAuth},
		// 1112 account locked, 1121 locked for irregular activity.
		{family: "zhipu", codes: []string{"1112", "1121"}, reason: ReasonAuthPermanent},
		// 1113 account in arrears ("Insufficient balance or no resource
		// package. Please recharge."); 1309 GLM Coding Plan expired; 1311
		// the subscription does not include the model.
		{family: "zhipu", codes: []string{"1113", "1309", "1311"}, reason: ReasonBilling},
		// 1210, 1212–1215: invalid call parameters / method.
		{family: "zhipu", codes: []string{"1200", "1210", "1212", "1213", "1214", "1215"}, reason: ReasonFormat, weak: true},
		// 1211 model does not exist; 1221 API taken offline; 1222 API does
		// not exist.
		{family: "zhipu", codes: []string{"1211", "1221", "1222"}, reason: ReasonModelNotFound},
		// 1230 API call process error; 1234 network error.
		{family: "zhipu", codes: []string{"1230"}, reason: ReasonServerError},
		{family: "zhipu", codes: []string{"1234"}, reason: ReasonTimeout},
		// 1261 prompt too long.
		{family: "zhipu", codes: []string{"1261"}, reason: ReasonContextOverflow},
		// 1300 blocked by policy; 1301 unsafe or sensitive content.
		{family: "zhipu", codes: []string{"1300", "1301"}, refusal: true},
		// 1302 concurrency too high, 1303 frequency too high, 1304 daily call
		// limit, 1308 usage cap until the next reset, 1310 weekly/monthly
		// cap, 1313 fair-use rate restriction.
		{family: "zhipu", codes: []string{"1302", "1303", "1304", "1308", "1310", "1313"}, reason: ReasonRateLimit},
		// 1312 the model is receiving too much traffic.
		{family: "zhipu", codes: []string{"1312"}, reason: ReasonOverloaded},
	}},
	{ruleCodeMoonshot, []codeRow{
		// Moonshot error types (platform.moonshot.ai; kimi.com/help/kimi-api):
		// 403 exceeded_current_quota_error "Your account … is not active,
		// organization … exceeded current quota, please check your plan and
		// billing details" / "suspended due to insufficient balance".
		{codes: []string{"exceeded_current_quota_error"}, reason: ReasonBilling},
		// 429 engine_overloaded_error "The engine is currently overloaded".
		{codes: []string{"engine_overloaded_error"}, reason: ReasonOverloaded},
		// 429 rate_limit_reached_error "request reached max request".
		{codes: []string{"rate_limit_reached_error"}, reason: ReasonRateLimit},
		// 401 invalid_authentication_error; 403 permission_denied_error.
		{codes: []string{"invalid_authentication_error", "permission_denied_error"}, reason: ReasonAuth},
		// 403 access_terminated_error (Kimi Code: "Access terminated. Review
		// our Community Guidelines").
		{codes: []string{"access_terminated_error"}, reason: ReasonAuthPermanent},
		// 404 resource_not_found_error.
		{codes: []string{"resource_not_found_error"}, reason: ReasonModelNotFound},
	}},
	{ruleCodeBedrock, []codeRow{
		// troubleshooting-api-error-codes.html: 403 AccessDeniedException
		// (IAM: "is not authorized to perform: bedrock:InvokeModel"),
		// UnrecognizedClientException / InvalidSignatureException /
		// InvalidClientTokenId / ExpiredTokenException (credentials).
		{codes: []string{"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "InvalidClientTokenId", "ExpiredTokenException"}, reason: ReasonAuth},
		// 404 ResourceNotFoundException (model id or legacy model);
		// FTUFormNotFilled (use-case form not submitted for the model).
		{codes: []string{"ResourceNotFoundException"}, reason: ReasonModelNotFound},
		// 400/429 ServiceQuotaExceededException ("resubmit later").
		{codes: []string{"ServiceQuotaExceededException"}, reason: ReasonRateLimit},
		// 408 ModelTimeoutException.
		{codes: []string{"ModelTimeoutException"}, reason: ReasonTimeout},
		// 424 ModelErrorException; 500 InternalServerException /
		// InternalFailure; ModelStreamErrorException.
		{codes: []string{"ModelErrorException", "InternalServerException", "InternalFailure", "ModelStreamErrorException"}, reason: ReasonServerError},
		// 400 ValidationException: the input fails a constraint. Generic.
		{codes: []string{"ValidationException"}, reason: ReasonFormat, weak: true},
	}},
	{ruleCodeAzure, []codeRow{
		// 404 DeploymentNotFound "The API deployment for this resource does
		// not exist".
		{codes: []string{"DeploymentNotFound"}, reason: ReasonModelNotFound},
		// 400 OperationNotSupported "The completion operation does not work
		// with the specified model".
		{codes: []string{"OperationNotSupported"}, reason: ReasonFormat, weak: true},
	}},
	{ruleCodeGemini, []codeRow{
		// google.rpc ErrorInfo reasons: MODEL_CAPACITY_EXHAUSTED ("No capacity
		// available for model … on the server").
		{codes: []string{"MODEL_CAPACITY_EXHAUSTED"}, reason: ReasonOverloaded},
		// INSUFFICIENT_G1_CREDITS_BALANCE (Google One AI credits).
		{codes: []string{"INSUFFICIENT_G1_CREDITS_BALANCE"}, reason: ReasonBilling},
		// troubleshooting: 400 FAILED_PRECONDITION "free tier is not available
		// in your country; enable billing". In practice also "User location is
		// not supported for the API use" and "Project … is not allowed to use
		// Publisher Model" (HH-018): an account precondition, so generic auth
		// (the text, e.g. a billing phrase, says more when it can).
		{codes: []string{"FAILED_PRECONDITION"}, reason: ReasonAuth, weak: true},
		// 403 PERMISSION_DENIED "API key doesn't have the required
		// permissions"; 401 UNAUTHENTICATED.
		{codes: []string{"PERMISSION_DENIED", "UNAUTHENTICATED"}, reason: ReasonAuth},
		// 404 NOT_FOUND "the requested resource wasn't found" (a model
		// path). Generic.
		{codes: []string{"NOT_FOUND"}, reason: ReasonModelNotFound, weak: true},
		// 504 DEADLINE_EXCEEDED.
		{codes: []string{"DEADLINE_EXCEEDED"}, reason: ReasonTimeout},
		// 400 INVALID_ARGUMENT "the request body is malformed". Generic.
		{codes: []string{"INVALID_ARGUMENT"}, reason: ReasonFormat, weak: true},
	}},
	{ruleCodeGroq, []codeRow{
		// deprecations: 400 model_decommissioned "The model … has been
		// decommissioned and is no longer supported".
		{codes: []string{"model_decommissioned"}, reason: ReasonModelNotFound},
		// flex-processing: 498 capacity_exceeded (flex tier at capacity).
		{codes: []string{"capacity_exceeded"}, reason: ReasonOverloaded},
	}},
	{ruleCodeTogether, []codeRow{
		// error-codes: model_not_available "Unable to access non-serverless
		// model …"; dedicated_endpoint_not_running.
		{codes: []string{"model_not_available", "dedicated_endpoint_not_running"}, reason: ReasonModelNotFound},
	}},
	{ruleCodeCopilot, []codeRow{
		// model_not_supported "The requested model is not supported" (the
		// model is not enabled for the subscription or does not exist).
		{codes: []string{"model_not_supported"}, reason: ReasonModelNotFound},
	}},
	{ruleCodeMistral, []codeRow{
		// error-glossary: code unknown_model (400, param model).
		{codes: []string{"unknown_model"}, reason: ReasonModelNotFound},
	}},
	{ruleCodeOpenAI, []codeRow{
		// error-codes: billing_hard_limit_reached, billing_not_active,
		// credit_balance_exhausted (429 "You have run out of credits").
		{codes: []string{"billing_hard_limit_reached", "billing_not_active", "credit_balance_exhausted"}, reason: ReasonBilling},
		// 403 unsupported_country_region_territory.
		{codes: []string{"unsupported_country_region_territory"}, reason: ReasonAuth},
		// 503 server_is_overloaded; 429 slow_down.
		{codes: []string{"server_is_overloaded"}, reason: ReasonOverloaded},
		{codes: []string{"slow_down"}, reason: ReasonRateLimit},
		// 401 invalid_api_key ("Incorrect API key provided"); 404
		// model_not_found ("The model … does not exist or you do not have
		// access to it"). DashScope spells the same InvalidApiKey and
		// ModelNotFound: an OpenAI error is credited to this table.
		{codes: []string{"invalid_api_key"}, reason: ReasonAuth, own: true},
		{codes: []string{"model_not_found"}, reason: ReasonModelNotFound, own: true},
	}},
	{ruleCodeAnthropic, []codeRow{
		// errors: 402 billing_error (a type, also sent as a code).
		{codes: []string{"billing_error"}, reason: ReasonBilling},
	}},
	{ruleCodeMiniMax, []codeRow{
		// errorcode: 1002 rate limit, 1039 token limit, 1041 connection limit.
		{family: "minimax", codes: []string{"1002", "1039", "1041"}, reason: ReasonRateLimit},
		// 1004 not authorized; 1008 insufficient balance.
		{family: "minimax", codes: []string{"1004"}, reason: ReasonAuth},
		{family: "minimax", codes: []string{"1008"}, reason: ReasonBilling},
		// 1026 input new_sensitive, 1027 output new_sensitive.
		{family: "minimax", codes: []string{"1026", "1027"}, refusal: true},
		// 1001 request timeout; 1024 internal error.
		{family: "minimax", codes: []string{"1001"}, reason: ReasonTimeout},
		{family: "minimax", codes: []string{"1024", "1033"}, reason: ReasonServerError},
		// 2013 invalid params.
		{family: "minimax", codes: []string{"2013"}, reason: ReasonFormat, weak: true},
	}},
	{ruleCodeCloudflare, []codeRow{
		// developers.cloudflare.com/workers-ai/platform/errors: the internal
		// code leads the message ("AiError: 5007: No such model …",
		// {"error":"3036: …"}). 5007 No such model, 3042 Invalid model ID.
		{family: "cloudflare", codes: []string{"5007", "3042"}, reason: ReasonModelNotFound},
		// 5018/3041 the account is not allowed to access this model, 5016
		// the model's terms were not agreed to, 3023 account blocked.
		{family: "cloudflare", codes: []string{"5018", "3041", "5016", "3023"}, reason: ReasonAuth},
		// 3036 Account limited: the daily free allocation is used up (it
		// reopens the next day); 3040 Out of capacity.
		{family: "cloudflare", codes: []string{"3036"}, reason: ReasonRateLimit},
		{family: "cloudflare", codes: []string{"3040"}, reason: ReasonOverloaded},
		// 3006 Request is too large; 3007 Request timeout.
		{family: "cloudflare", codes: []string{"3006"}, reason: ReasonContextOverflow},
		{family: "cloudflare", codes: []string{"3007"}, reason: ReasonTimeout},
		// 5004 Invalid data, 3003 Incomplete request, 5005 LoRa unsupported,
		// 5019 Deprecated SDK version: the request, generic.
		{family: "cloudflare", codes: []string{"5004", "3003", "5005", "5019"}, reason: ReasonFormat, weak: true},
	}},
	{ruleCodeLlamaCpp, []codeRow{
		// server: type exceed_context_size_error "the request exceeds the
		// available context size" (with n_prompt_tokens, n_ctx).
		{codes: []string{"exceed_context_size_error"}, reason: ReasonContextOverflow},
	}},
}

// providerCode is one resolved table row.
type providerCode struct {
	row  *codeRow
	rule *ruleInfo
}

var (
	providerCodeIndex = map[string]providerCode{} // family + "/" + normCode
	// textCodes: the table's alphabetic spellings, matched word-bounded in text.
	textCodes   *table
	textCodeMap = map[string]providerCode{} // lower-case spelling → row
	// ownSpelled: the own-only rows by their lower-case spelling, for
	// [creditSpelling].
	ownSpelled = map[string]providerCode{}
)

func init() {
	var phrases []string
	for ti := range codeTables {
		ct := &codeTables[ti]
		for ri := range ct.rows {
			row := &ct.rows[ri]
			pc := providerCode{row: row, rule: ct.rule}
			for _, c := range row.codes {
				n := normCode(c)
				// A table answers for its own provider (codeProvider),
				// whose errors it documents; a row that is not own-only
				// for every provider too.
				if p := codeProvider(ct.rule); row.family == "" && p != "" {
					providerCodeIndex["@"+p+"/"+n] = pc
				}
				if row.own {
					ownSpelled[strings.ToLower(c)] = pc
					continue
				}
				providerCodeIndex[row.family+"/"+n] = pc
				if row.family == "" && !isDigits(c) {
					l := strings.ToLower(c)
					if _, dup := textCodeMap[l]; !dup {
						textCodeMap[l] = pc
						phrases = append(phrases, `\b`+l+`\b`)
					}
				}
			}
		}
	}
	textCodes = newTable("provider_text_codes", phrases...)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lookupCode finds code for the provider family (numeric codes) or any
// provider (alphabetic codes).
func lookupCode(family, provider, code string) (providerCode, bool) {
	n := normCode(code)
	if n == "" {
		return providerCode{}, false
	}
	if family != "" {
		if pc, ok := providerCodeIndex[family+"/"+n]; ok {
			return pc, true
		}
	}
	if isDigits(n) {
		return providerCode{}, false
	}
	if provider != "" {
		if pc, ok := providerCodeIndex["@"+provider+"/"+n]; ok {
			return pc, true
		}
	}
	pc, ok := providerCodeIndex["/"+n]
	if ok {
		pc = creditSpelling(pc, code)
	}
	return pc, ok
}

// creditSpelling: a code that reached pc's row only through the
// separator- and case-blind comparison (invalid_api_key is DashScope's
// InvalidApiKey there), but that an own-only row documents in exactly
// its spelling (OpenAI's invalid_api_key), is credited to that row's
// table when both rows decide alike — the OpenAI-compatible APIs (Groq,
// DeepSeek, Together, …) send OpenAI's spellings, and their errors should
// not cite DashScope's documents. The verdict never changes.
func creditSpelling(pc providerCode, code string) providerCode {
	for _, c := range pc.row.codes {
		if strings.EqualFold(c, code) {
			return pc // spelled as this row documents it
		}
	}
	o, ok := ownSpelled[strings.ToLower(code)]
	if !ok || o.row.reason != pc.row.reason || o.row.refusal != pc.row.refusal || o.row.weak != pc.row.weak {
		return pc
	}
	return o
}

// codeProvider is the provider id a code table documents (its rule
// code.provider.<id>), "" for a family's table.
func codeProvider(r *ruleInfo) string {
	return strings.TrimPrefix(r.id, "code.provider.")
}

// providerFamilies: who a numeric business code belongs to, from the
// provider field or the API host quoted in the text.
var providerFamilies = []struct {
	id    string
	names []string // substrings of the lower-cased provider field
	hosts *table   // hosts in the text
}{
	{"zhipu", []string{"zhipu", "zai", "z.ai", "bigmodel", "chatglm", "glm"}, newTable("family_zhipu_hosts", "bigmodel.cn", "api.z.ai", "z.ai/api")},
	{"minimax", []string{"minimax"}, newTable("family_minimax_hosts", "api.minimax", "minimaxi.com", "minimax.io")},
	{"cloudflare", []string{"cloudflare", "workers ai", "workers-ai", "workersai", "workers_ai"}, newTable("family_cloudflare_hosts", "api.cloudflare.com", "gateway.ai.cloudflare.com", "@cf/", "aierror")},
}

// family returns the provider family id of the signal, "" when unknown.
func (s *signal) family() string {
	if s.familyDone {
		return s.fam
	}
	s.familyDone = true
	p := s.ctx.providerRaw
	for _, f := range providerFamilies {
		for _, n := range f.names {
			if strings.Contains(p, n) {
				s.fam = f.id
				return s.fam
			}
		}
	}
	for _, f := range providerFamilies {
		for _, t := range []*text{s.msg, s.body} {
			if t != nil && f.hosts.in(&t.hits) {
				s.fam = f.id
				return s.fam
			}
		}
	}
	return ""
}

// codeHit is one provider-table hit of a signal.
type codeHit struct {
	field, code string
	pc          providerCode
}

// providerCodes returns every provider-table hit of the signal in evidence
// order: the code field, the type field, a non-numeric status, codes and
// types in embedded JSON (numeric ones too, for scoped families), then
// codes quoted in text. Computed once per signal.
func (s *signal) providerCodes() []codeHit {
	if s.provDone {
		return s.prov
	}
	s.provDone = true
	fam := s.family()
	try := func(field, code string) {
		if pc, ok := lookupCode(fam, s.ctx.provider, code); ok && len(s.prov) < 16 {
			s.prov = append(s.prov, codeHit{field, code, pc})
		}
	}
	if c := strings.TrimSpace(s.e.Code); c != "" {
		try(s.prefix+"code", c)
	}
	if t := strings.TrimSpace(s.e.Type); t != "" {
		try(s.prefix+"type", t)
	}
	if s.e.statusCode != "" {
		try(s.prefix+"status", s.e.statusCode)
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		for _, f := range t.embedded() {
			k := keyKind(f.key)
			// MiniMax's native body puts its business code in
			// base_resp.status_code ({"status_code":1008,"status_msg":
			// "insufficient balance"}); numeric, so it counts only for a
			// known family (a 4xx there is in no family's table).
			if k != keyCode && k != keyType && !(fam != "" && k == keyStatus) {
				continue
			}
			if !f.str && !isDigits(f.val) {
				continue
			}
			try(t.field+"#"+f.path, f.val)
		}
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		if dashScopeGate.in(&t.hits) {
			if m := dashScopeTextCode.FindStringSubmatch(t.lower); m != nil {
				try(t.field, m[2])
			}
		}
		if textCodes.in(&t.hits) {
			for _, id := range textCodes.ids {
				if !t.hits.has(id) {
					continue
				}
				sp := phraseBook.list[id].s
				if !standaloneCode(t.lower, sp) {
					continue
				}
				if pc, ok := textCodeMap[sp]; ok && len(s.prov) < 16 {
					s.prov = append(s.prov, codeHit{t.field, sp, pc})
				}
			}
		}
		// A known family's numeric code written in text: "insufficient
		// balance (1008)" (MiniMax via hermes-agent), "[1301][…]" (Zhipu),
		// "error code 1113", "错误码：1113". Only the family's own rows.
		if fam != "" && familyTextCodeGate.in(&t.hits) {
			for _, m := range familyTextCodeRe.FindAllStringSubmatchIndex(t.lower, 8) {
				switch {
				case m[2] >= 0 && bracketCodeStands(t.lower, m[0], m[1]):
					try(t.field, t.lower[m[2]:m[3]])
				case m[4] >= 0:
					try(t.field, t.lower[m[4]:m[5]])
				}
			}
		}
		// Cloudflare Workers AI leads its message with the code:
		// "AiError: 5028: …", {"error":"5006: Error: …"}, "3036: …".
		if fam == "cloudflare" {
			if m := cloudflareTextCodeRe.FindStringSubmatch(t.lower); m != nil {
				try(t.field, m[1])
			}
		}
		if grpcStatusGate.in(&t.hits) {
			if m := grpcStatusRe.FindStringSubmatch(t.lower); m != nil {
				if name, ok := grpcCodeNames[m[1]]; ok {
					try(t.field, name)
				}
			}
		}
	}
	return s.prov
}

// standaloneCode: sp occurs in lower as a code of its own, not as the head
// of a longer dotted code ("InternalError" in
// "InternalError.Algo.DataInspectionFailed" is not the code). At most 8
// occurrences are looked at.
func standaloneCode(lower, sp string) bool {
	from := 0
	for n := 0; n < 8; n++ {
		k := strings.Index(lower[from:], sp)
		if k < 0 {
			return false
		}
		i := from + k
		e := i + len(sp)
		from = e
		if i > 0 && isWordByte(lower[i-1]) || e < len(lower) && isWordByte(lower[e]) {
			continue
		}
		if e+1 < len(lower) && lower[e] == '.' && isWordByte(lower[e+1]) {
			continue
		}
		return true
	}
	return false
}

// familyTextCode: a business code in brackets, or after "code" / 错误码,
// in a known family's text (numeric codes never apply outside their family).
var (
	familyTextCodeGate = newTable("family_text_code_gate", "(1", "(2", "[1", "[2", "code", "错误码", "錯誤碼")
	familyTextCodeRe   = regexp.MustCompile(`[(\[](\d{4})[)\]]|(?:\bcode|错误码|錯誤碼)\W{0,3}(\d{4})\b`)
)

// cloudflareTextCodeRe: a Workers AI internal code leading the message, an
// AiError, or a JSON error string.
var cloudflareTextCodeRe = regexp.MustCompile(`(?:^\W{0,3}|\baierror:\s*|"error"\s*:\s*")([35]\d{3}):\s`)

// bracketCodeStands: a bracketed number [i, e) is a code of its own — it
// opens the text ("[1301][…]"), ends it ("insufficient balance (1008)."),
// or is followed by another bracket or a colon — not a count inside a
// sentence ("max tokens (1000) exceeded").
func bracketCodeStands(lower string, i, e int) bool {
	if strings.TrimSpace(lower[:i]) == "" {
		return true
	}
	rest := strings.TrimLeft(lower[e:], " ")
	return strings.Trim(rest, " .!\"'}\n\r\t") == "" || strings.HasPrefix(rest, "[") || strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, ":")
}

// grpcStatus: a gRPC status number quoted in text ("grpc_status:9",
// "grpc_status: 8"), read as its google.rpc.Code name (grpc/grpc
// doc/statuscodes.md) and looked up like any code.
var (
	grpcStatusGate = newTable("grpc_status_gate", "grpc_status")
	grpcStatusRe   = regexp.MustCompile(`grpc_status\W{0,3}(\d{1,2})\b`)
	grpcCodeNames  = map[string]string{
		"3": "INVALID_ARGUMENT", "4": "DEADLINE_EXCEEDED", "5": "NOT_FOUND", "7": "PERMISSION_DENIED",
		"8": "RESOURCE_EXHAUSTED", "9": "FAILED_PRECONDITION", "13": "INTERNAL", "14": "UNAVAILABLE", "16": "UNAUTHENTICATED",
	}
)

// dashScopeTextCode: the DashScope SDKs print "<400> InternalError.Algo.X:
// message"; the token after the status is the provider's code.
var (
	dashScopeGate     = newTable("dashscope_text_code_gate", "<4", "<5")
	dashScopeTextCode = regexp.MustCompile(`<(\d{3})>\s*([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)\s*:`)
)

// definitiveCode is the first definitive provider code of the signal (one
// that decides over the message rules and the status).
func (s *signal) definitiveCode() verdict {
	for _, h := range s.providerCodes() {
		if !h.pc.row.weak && h.pc.row.reason != "" {
			return verdict{reason: h.pc.row.reason, rule: h.pc.rule, field: h.field, match: h.code}
		}
	}
	return verdict{}
}

// genericCode is the first generic (weak) provider code: a fallback like
// the API error type.
func (s *signal) genericCode() verdict {
	for _, h := range s.providerCodes() {
		if h.pc.row.weak {
			return verdict{reason: h.pc.row.reason, rule: ruleCodeGeneric, field: h.field, match: h.code}
		}
	}
	return verdict{}
}

// refusalCode is the first provider code that is a moderation block.
func (s *signal) refusalCode() (verdict, bool) {
	for _, h := range s.providerCodes() {
		if h.pc.row.refusal {
			return verdict{rule: ruleRefusalCode, field: h.field, match: h.code}, true
		}
	}
	return verdict{}, false
}

// Inner status.
//
// Wrappers report their own status, or none, around the provider's: an SDK
// message "Error code: 400 - {…}", a DashScope "<400>", a gateway's JSON
// {"error":{"code":429,…}} or "statusCode":429, "[400 Bad Request]". When the
// error has no explicit status and does not start with one, the provider's
// status written inside the text is the status (rule status.* with the
// field it was read from); when the explicit status is a wrapper's 5xx and
// the provider's own status inside is a 4xx, the provider's wins
// (status.inner).

// innerStatusKeys are JSON keys that hold an HTTP status.
var innerStatusKeys = map[string]bool{
	"code": true, "status": true, "statuscode": true, "status_code": true, "http_status": true,
	"httpstatus": true, "http_status_code": true, "raw_status_code": true, "upstreamstatus": true,
	"upstream_status": true, "statuscodevalue": true,
}

var (
	textStatusGate = newTable("text_status_gate",
		"error code", "status code", "status_code", "statuscode", "status:", "status =", "http status",
		"http_status", "response code", "api error", "error:", "error ", "<4", "<5", "[4", "[5", "http/", "failed with status",
		"bad request", "unauthorized", "forbidden", "not found", "too many requests", "internal server error",
		"bad gateway", "service unavailable", "gateway timeout", "payment required", "unprocessable entity",
		"returned", "got a", "received", "responded with", "failed with")
)

// innerStatus returns the provider's own HTTP status written inside the
// signal's texts (4xx/5xx), the field it was read from, and 0 when none.
// JSON fields come first (the last one found: the innermost error), then
// status shapes in the text (the last one: wrappers write theirs first).
func (s *signal) innerStatus() (int, string) {
	if s.innerDone {
		return s.inner, s.innerField
	}
	s.innerDone = true
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		for _, f := range t.embedded() {
			if !innerStatusKeys[f.key] || len(f.val) != 3 {
				continue
			}
			if n, err := strconv.Atoi(f.val); err == nil && n >= 400 && n <= 599 {
				s.inner, s.innerField = n, t.field+"#"+f.path
			}
		}
	}
	if s.inner != 0 {
		return s.inner, s.innerField
	}
	for _, t := range []*text{s.msg, s.body} {
		if t == nil {
			continue
		}
		// A status after a CLI's decoration: "✗ 402 You have no quota".
		if n := decoratedLeadingStatus(t.lower); n >= 400 {
			s.inner, s.innerField = n, t.field
			break
		}
		if !textStatusGate.in(&t.hits) {
			continue
		}
		if n := lastTextStatus(t.lower); n != 0 {
			s.inner, s.innerField = n, t.field
			break
		}
	}
	return s.inner, s.innerField
}

// Status shapes in a text (innerStatus), read by lastTextStatus in one
// pass instead of a regex (issue 17, perf):
//
//   - a status word before the number, up to 4 non-word bytes between:
//     "Error code: 429", "status code 400", "status_code=403",
//     "HTTP status 500", "API Error: 402", "error 404", "failed with
//     status code 413";
//   - a bracket or angle: "<400>", "[429]";
//   - an HTTP status line: "HTTP/1.1 503 ";
//   - the number before its reason phrase: "400 Bad Request", "429 Too
//     Many Requests".
var textStatusWords = []string{
	"error code", "status code", "status_code", "statuscode", "http status", "http_status",
	"httpstatus", "response code", "status", "api error", "error",
}

// linkedStatusWords may be followed by "of"/"is"/"was" before the number.
var linkedStatusWords = []string{"status code", "status_code", "statuscode", "http status", "http status code", "response code", "error code", "status"}

// wordAfterNumber: the number ending at e is followed by a word that makes
// it a count ("500 tokens", "404 results"), not a status: a reason phrase
// ("503 Service Unavailable") or a linking word ("429 from upstream", "502
// error") leaves it a status.
func wordAfterNumber(lower string, e int) bool {
	if e >= len(lower) || lower[e] != ' ' || e+1 >= len(lower) {
		return false
	}
	c := lower[e+1]
	if !(c >= 'a' && c <= 'z') {
		return false
	}
	if statusReasonAfter(lower, e-3) {
		return false
	}
	w := lower[e+1:]
	if k := strings.IndexFunc(w, func(r rune) bool { return !(r >= 'a' && r <= 'z') }); k >= 0 {
		w = w[:k]
	}
	switch w {
	case "from", "for", "on", "at", "when", "while", "with", "error", "response", "status", "code", "and", "or", "in", "after", "because", "by", "to":
		return false
	}
	return true
}

var textStatusReasons = []string{
	"bad request", "unauthorized", "forbidden", "not found", "too many requests",
	"internal server error", "bad gateway", "service unavailable", "gateway timeout",
	"payment required", "unprocessable entity", "request entity too large", "precondition failed",
}

// lastTextStatus returns the last 4xx/5xx written in a status shape in
// lower, 0 when none (wrappers write theirs first, the provider's last).
func lastTextStatus(lower string) int {
	last := 0
	for i := 0; i+3 <= len(lower); i++ {
		c := lower[i]
		if c != '4' && c != '5' || !isDigit(lower[i+1]) || !isDigit(lower[i+2]) {
			continue
		}
		if i+3 < len(lower) && isWordByte(lower[i+3]) || i > 0 && isDigit(lower[i-1]) {
			continue
		}
		if statusBefore(lower, i) || statusReasonAfter(lower, i) {
			last = int(c-'0')*100 + int(lower[i+1]-'0')*10 + int(lower[i+2]-'0')
		}
		i += 2
	}
	return last
}

// statusBefore: a status word, bracket or HTTP status line ends just
// before lower[i].
func statusBefore(lower string, i int) bool {
	if i == 0 {
		return false
	}
	if p := lower[i-1]; p == '<' || p == '[' {
		return true
	}
	j := i
	for k := 0; k < 4 && j > 0 && !isWordByte(lower[j-1]); k++ {
		j--
	}
	if j > 0 && !isWordByte(lower[j-1]) {
		return false // more than 4 non-word bytes
	}
	head := lower[:j]
	for _, w := range textStatusWords {
		if hasWordSuffix(head, w) {
			return true
		}
	}
	// "the response has a status code of 503", "HTTP status is 502",
	// "status code was 429": a status phrase, a linking word, the number.
	for _, link := range []string{"of", "is", "was", "="} {
		if !hasWordSuffix(head, link) && !(link == "=" && strings.HasSuffix(head, link)) {
			continue
		}
		h := strings.TrimRight(head[:len(head)-len(link)], " ")
		if len(h) == len(head)-len(link) && link != "=" {
			continue // "xof 503": the link must stand apart
		}
		for _, w := range linkedStatusWords {
			if hasWordSuffix(h, w) {
				return true
			}
		}
	}
	// "server returned 503", "got a 429", "received 502": only when the
	// number is not followed by a word ("returned 500 tokens").
	for _, w := range []string{"returned", "returned a", "returned an", "got a", "got an", "received", "received a", "responded with", "responded with a", "failed with"} {
		if hasWordSuffix(head, w) && !wordAfterNumber(lower, i+3) {
			return true
		}
	}
	// "http/1.1 503 ", "http/2 503 "
	if j == i-1 && lower[j] == ' ' {
		h := head
		if len(h) >= 2 && h[len(h)-2] == '.' && isDigit(h[len(h)-1]) {
			h = h[:len(h)-2]
		}
		if len(h) >= 1 && isDigit(h[len(h)-1]) && hasWordSuffix(h[:len(h)-1], "http/") {
			return true
		}
	}
	return false
}

// statusReasonAfter: "400 bad request", the number at a word start.
func statusReasonAfter(lower string, i int) bool {
	if i > 0 && isWordByte(lower[i-1]) || i+4 > len(lower) || lower[i+3] != ' ' {
		return false
	}
	rest := lower[i+4:]
	for _, r := range textStatusReasons {
		if strings.HasPrefix(rest, r) && (len(rest) == len(r) || !isWordByte(rest[len(r)])) {
			return true
		}
	}
	return false
}

// decoratedLeadingStatus: the leading status of a text that starts with up
// to 8 bytes of symbols (✗, ✕, ⎿, ❌, "> "), 0 when none. Brackets and
// braces are not decoration (JSON and "[API Error: …]" are read above).
func decoratedLeadingStatus(lower string) int {
	i := 0
	for i < len(lower) && i < 8 {
		c := lower[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '<' || c == '[' || c == '{' || c == '(' || c == '"' || c == '\'' {
			break
		}
		i++
	}
	if i == 0 || i >= len(lower) {
		return 0
	}
	return leadingStatus(lower[i:])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
