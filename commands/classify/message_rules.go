package classify

import (
	"sort"
	"strings"
)

// verdict is one rule's answer: a reason (or none) plus its evidence.
type verdict struct {
	reason  Reason
	rule    *ruleInfo
	field   string
	match   string
	ceiling *Ceiling
	// kept is set by a status rule that kept an earlier verdict rather than
	// imposing the status's own default.
	kept bool
	// bare is set by a status rule that decided with no other verdict at
	// all: the reason is the status's alone.
	bare bool
}

func (v verdict) ok() bool { return v.reason != "" }

func hit(r Reason, rule *ruleInfo, t *text, match string) verdict {
	return verdict{reason: r, rule: rule, field: t.field, match: match}
}

// messageRule is one entry of the ordered message rule list. eval returns
// decided=true when the rule matched; the reason may then be empty (rule 1:
// "never fail over" means no verdict, and no later rule runs).
type messageRule struct {
	info *ruleInfo
	eval func(t *text, c *msgCtx) (Reason, string, bool)
}

// msgCtx is what message rules may know besides the text.
type msgCtx struct {
	provider    string // normalised provider id
	providerRaw string // lower-cased provider field as given
	// errType is the signal's own error type (explicit type field, or a code
	// that is really a type), for rule 28.
	errType      string
	errTypeField string // "type", or "code" when the code field holds the type
	// structuredServer: the signal's own code/type says server_error or
	// upstream_error (rule 16).
	structuredServer bool
	// noLeadingStatus disables rule 29 (details reuse the rules).
	noLeadingStatus bool
	// parentLead429: the text is a detail of a message that starts with 429.
	parentLead429 bool
	// status: the signal's explicit or leading status (0: none), and
	// innerStatus the status written inside its text, for rules that apply
	// only when the error carries no status at all.
	status, innerStatus int
	// billingCondition: the signal's message or body states a billing
	// condition (billingCondition), for status.5xx.
	billingCondition bool
	// typedRateLimit: the provider's own type or code, or an SDK's
	// RateLimitError, names a rate limit (typedRateLimit), for status.5xx.
	typedRateLimit bool
}

// messageRules is reference §2.2, in order. fledger additions are marked in
// rules.go and tables.go; the order itself is OpenClaw's.
var messageRules = []messageRule{
	{ruleMsgImageDimension, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := imageDimensionRe.find(t)
		return "", m, ok
	}},
	{ruleMsgUnsupportedImage, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := unsupportedImage.find(&t.hits); ok {
			return ReasonFormat, m, true
		}
		if noEndpointsFound.in(&t.hits) && supportImageInput.in(&t.hits) {
			return ReasonFormat, "support image input", true
		}
		return "", "", false
	}},
	{ruleMsgClaudeCLIAuth, func(t *text, c *msgCtx) (Reason, string, bool) {
		if c.provider != "claude-cli" {
			return "", "", false
		}
		m, ok := claudeCLIAuth.find(&t.hits)
		return ReasonAuth, m, ok
	}},
	{ruleMsgTranscript, tableRule(transcriptInvalid, ReasonFormat)},
	{ruleMsgSession, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := sessionExpiredPhrases.find(&t.hits); ok {
			return ReasonSessionExpired, m, true
		}
		m, ok := sessionExpiredRe.find(t)
		return ReasonSessionExpired, m, ok
	}},
	{ruleMsgModelNotFound, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := modelNotFoundMatch(t)
		return ReasonModelNotFound, m, ok
	}},
	{ruleMsgLegacy, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := workersAIQuota.find(t); ok {
			return ReasonRateLimit, m, true
		}
		if m, ok := modelNotReady.find(&t.hits); ok {
			return ReasonOverloaded, m, true
		}
		m, ok := modelDeactivated.find(&t.hits)
		return ReasonModelNotFound, m, ok
	}},
	{ruleMsgOverflow, nil}, // evaluated in messageVerdict: it carries a ceiling
	{ruleMsgReplay, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := replayInvalid.find(&t.hits); ok {
			return ReasonFormat, m, true
		}
		m, ok := firstOf(t, replayInvalidSeq...)
		return ReasonFormat, m, ok
	}},
	{ruleMsg402, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := has402Marker(t)
		if !ok {
			return "", "", false
		}
		r, why := classify402(t)
		return r, m + " → " + why, true
	}},
	{ruleMsgBilling, func(t *text, c *msgCtx) (Reason, string, bool) {
		// ref §2.2 rule 11: not when the text starts with a 429. fledger
		// (issue 17 family 3, OpenClaw parity on RE2-009/RE2-012): only when
		// the text after that 429 also carries rate-limit evidence; "429
		// 余额不足…" and "429 {…1113 Insufficient balance…}" are billing.
		if (c.parentLead429 || leadingStatus(t.lower) == 429) && rateEvidence(t) {
			return "", "", false
		}
		m, ok := billingMatch(t)
		// fledger (issue 17 third blind set): OpenAI's "Rate limit reached
		// for gpt-4o-mini … on requests per day … You can increase your rate
		// limit by adding a payment method" names a rate limit; the payment
		// method is an upsell, not the account's condition.
		if ok && billingUpsell[m] && rateLimitNamed.in(&t.hits) && !billingCondition.in(&t.hits) {
			return "", "", false
		}
		return ReasonBilling, m, ok
	}},
	{ruleMsgPeriodic, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := periodicLimitRe.find(t)
		if !ok {
			m, ok = firstOf(t, usageWindowMore...)
		}
		if !ok {
			return "", "", false
		}
		if _, billing := billingMatch(t); billing {
			return ReasonBilling, m, true
		}
		return ReasonRateLimit, m, true
	}},
	{ruleMsgRateLimit, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := rateLimitMatch(t)
		return ReasonRateLimit, m, ok
	}},
	{ruleMsgOverloaded, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := overloadedMatch(t)
		return ReasonOverloaded, m, ok
	}},
	{ruleMsgFinishError, finderRule(finishReasonError, ReasonServerError)},
	{ruleMsgStructuredServer, func(t *text, c *msgCtx) (Reason, string, bool) {
		m, ok := structuredServerError.find(t)
		if !ok && c.structuredServer {
			m, ok = "server_error", true
		}
		if !ok || isBilling(t) || isAuth(t) {
			return "", "", false
		}
		return ReasonServerError, m, true
	}},
	{ruleMsgRuntimeFailure, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := firstOf(t, runtimeFailure...)
		return ReasonServerError, m, ok
	}},
	{ruleMsgGenericInternal, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if genericInternalBare[t.bare] {
			return ReasonTimeout, t.bare, true
		}
		return "", "", false
	}},
	{ruleMsgOAuthRefresh, tableRule(oauthRefreshPermanent, ReasonAuthPermanent)},
	{ruleMsgAuthPermanent, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := highConfidenceAuth(t)
		return ReasonAuthPermanent, m, ok
	}},
	{ruleMsgAuth, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := authPhrases.find(&t.hits); ok {
			return ReasonAuth, m, true
		}
		m, ok := firstOf(t, authMore...)
		return ReasonAuth, m, ok
	}},
	{ruleMsgUnknownOccurred, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if t.bare == "an unknown error occurred" {
			return ReasonTimeout, t.bare, true
		}
		return "", "", false
	}},
	{ruleMsgServerText, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := serverPhrases.find(&t.hits); ok {
			return ReasonTimeout, m, true
		}
		m, ok := firstOf(t, serverMore...)
		return ReasonTimeout, m, ok
	}},
	{ruleMsgAPIErrorTransient, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if _, ok := apiErrorType.find(t); !ok {
			return "", "", false
		}
		m, ok := transientText.find(&t.hits)
		if !ok {
			m, ok = temporarilyUnable.find(t)
		}
		if !ok || isBilling(t) || isAuth(t) {
			return "", "", false
		}
		return ReasonTimeout, "api_error: " + m, true
	}},
	{ruleMsgFormat, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if m, ok := formatPhrases.find(&t.hits); ok {
			return ReasonFormat, m, true
		}
		m, ok := firstOf(t, formatMore...)
		return ReasonFormat, m, ok
	}},
	{ruleMsgNoErrorDetails, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if t.bare == "unknown error (no error details in response)" {
			return ReasonNoErrorDetails, t.bare, true
		}
		return "", "", false
	}},
	{ruleMsgTimeout, func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := timeoutMatch(t)
		return ReasonTimeout, m, ok
	}},
	{ruleMsgAssistantOverflow, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if tpmHint.in(&t.hits) {
			return "", "", false
		}
		if _, ok := firstOf(t, reasoningConstraint...); ok {
			return "", "", false
		}
		m, ok := firstOf(t, assistantOverflow...)
		if ok && rateBound(m) {
			return "", "", false // "token limit (500,000 per day) exceeded": a quota window
		}
		return ReasonContextOverflow, m, ok
	}},
	{ruleMsgType, nil}, // evaluated in messageVerdict: the field is a JSON path
	{ruleMsgEmptyResponse, tableRule(emptyResponsePhrases, ReasonEmptyResponse)},
	{ruleMsgLeadingStatus, nil}, // evaluated in messageVerdict: it applies the status rules
	// fledger (issue 17 third blind set): the provider says when to come
	// back — "No deployments available for selected model, Try again in 1
	// seconds" (a LiteLLM router whose deployments all cool down), "Please
	// try again in 7m12s" — and no rule above named the failure: waiting
	// is what it asks for, a throttle. Last, so any named failure wins.
	{ruleMsgRetryHint, func(t *text, _ *msgCtx) (Reason, string, bool) {
		if _, ok := textRetryAfter(t); !ok {
			return "", "", false
		}
		return ReasonRateLimit, "stated retry delay", true
	}},
}

// messageVerdict runs the message rules over t, first match wins.
func messageVerdict(t *text, c *msgCtx) verdict {
	if t.empty() {
		return verdict{}
	}
	for i := range messageRules {
		r := &messageRules[i]
		switch r.info {
		case ruleMsgOverflow:
			if v, ok := t.overflow(); ok {
				return v
			}
			continue
		case ruleMsgType:
			if v := typeVerdictIn(t, c); v.ok() {
				return v
			}
			continue
		case ruleMsgLeadingStatus:
			if c.noLeadingStatus {
				continue
			}
			if st := leadingStatus(t.lower); st != 0 {
				v, _ := statusRule(st, verdict{}, t, c, false, verdict{})
				if v.ok() {
					v.rule, v.field = ruleMsgLeadingStatus, t.field
					return v
				}
			}
			continue
		}
		reason, m, ok := r.eval(t, c)
		if !ok {
			continue
		}
		if reason == "" {
			return verdict{} // rule 1: no verdict, and no later rule runs
		}
		return hit(reason, r.info, t, m)
	}
	return verdict{}
}

// overflow is overflowVerdict, computed once per text.
func (t *text) overflow() (verdict, bool) {
	if !t.ovDone {
		t.ovDone = true
		t.ov, t.ovOK = overflowVerdict(t)
	}
	return t.ov, t.ovOK
}

// overflowVerdict is rule 8: an explicit overflow phrase, or a request-size
// ceiling, but never a bare TPM hint or a reasoning constraint.
func overflowVerdict(t *text) (verdict, bool) {
	if _, ok := firstOf(t, reasoningConstraint...); ok {
		return verdict{}, false
	}
	if c, m := detectCeiling(t); c != nil {
		v := hit(ReasonContextOverflow, ruleMsgOverflow, t, m)
		v.ceiling = c
		return v, true
	}
	if tpmHint.in(&t.hits) {
		return verdict{}, false
	}
	if m, ok := contextOverflowPhrases.find(&t.hits); ok {
		return hit(ReasonContextOverflow, ruleMsgOverflow, t, m), true
	}
	if m, ok := firstOf(t, contextOverflowSeq...); ok {
		return hit(ReasonContextOverflow, ruleMsgOverflow, t, m), true
	}
	if m, ok := overflowShape(t); ok {
		return hit(ReasonContextOverflow, ruleMsgOverflowShape, t, m), true
	}
	return verdict{}, false
}

// overflowShape is the structural overflow rule (tables.go
// contextOverflowShapes). A match that only speaks of output tokens is a
// bad max_tokens, not an overflow.
func overflowShape(t *text) (string, bool) {
	for _, f := range contextOverflowShapes {
		m, ok := f.search(t)
		if !ok {
			continue
		}
		if outputOnly(m) || rateBound(m) {
			continue
		}
		return m, true
	}
	return "", false
}

// rateBound: the limit a count exceeds is a rate, not a window —
// Anthropic "Number of request tokens has exceeded your per-minute rate
// limit", "… your daily rate limit" (fledger, issue 17 fresh-user pass).
func rateBound(m string) bool {
	for _, w := range []string{"rate limit", "rate-limit", "ratelimit", "per-minute", "per minute", "per-day", "per day", "per hour", "daily", "hourly"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

func outputOnly(m string) bool {
	for _, w := range []string{"max_tokens", "max_new_tokens", "max_completion_tokens", "completion", "output", "generat"} {
		if strings.Contains(m, w) && !strings.Contains(m, "input") && !strings.Contains(m, "prompt") && !strings.Contains(m, "+") {
			return true
		}
	}
	return false
}

// rateEvidence: rate-limit wording beyond a bare status (rule 11's 429 guard).
func rateEvidence(t *text) bool {
	if rateLimitPhrases.in(&t.hits) || rateLexicon.in(&t.hits) {
		return true
	}
	if _, ok := periodicLimitRe.find(t); ok {
		return true
	}
	_, ok := firstOf(t, rateMore...)
	return ok
}

// typeVerdictIn is rule 28: an API error type from JSON inside the text, or
// the signal's own error type.
func typeVerdictIn(t *text, c *msgCtx) verdict {
	for _, f := range t.embedded() {
		if keyKind(f.key) != keyType {
			continue
		}
		if r := typeReason(f.val); r != "" {
			return verdict{reason: r, rule: ruleMsgType, field: t.field + "#" + f.path, match: f.val}
		}
	}
	if r := typeReason(c.errType); r != "" {
		return verdict{reason: r, rule: ruleMsgType, field: c.errTypeField, match: c.errType}
	}
	// fledger (issue 17 blind set): an API error type written in the text,
	// as SDKs and apps print it: "[invalid_request_error] Invalid
	// parameter: …" (Prism PHP), "invalid_request_error: …", "(…_error)".
	if m, ok := textTypes.find(&t.hits); ok {
		if r := typeReason(m); r != "" {
			return verdict{reason: r, rule: ruleMsgType, field: t.field, match: m}
		}
	}
	// With no status at all, a leading "invalid request:" (Cohere "invalid
	// request: message must be at least 1 token long"), "Bad request:",
	// "Invalid parameter:" is the provider's own error class.
	if c.status == 0 && c.innerStatus == 0 {
		// fledger (issue 17 second blind set): an SDK's error class names
		// the status class the SDK received — "litellm.BadRequestError: LLM
		// Provider NOT provided", "openai.PermissionDeniedError: …",
		// "litellm.ServiceUnavailableError: …". It stands for a status, so
		// it counts only when no status is known: a provider's own status
		// inside the text says more.
		if m, ok := sdkClasses.find(&t.hits); ok {
			return verdict{reason: sdkClassReason[m], rule: ruleMsgType, field: t.field, match: m}
		}
		if m, ok := invalidRequestLead.find(t); ok {
			return verdict{reason: ReasonFormat, rule: ruleMsgType, field: t.field, match: m}
		}
		// Not in JSON inside the text: the message itself holds the same
		// words, and its own verdict (an API type) is the better evidence.
		if !strings.Contains(t.field, "#") {
			if m, ok := requestShapeWords.find(&t.hits); ok {
				return verdict{reason: ReasonFormat, rule: ruleMsgType, field: t.field, match: m}
			}
		}
	}
	return verdict{}
}

// requestShapeWords: how request validators word a malformed request, the
// class an API type would name (fledger, issue 17 blind set): OpenAI
// "Unrecognized request argument supplied", "Missing required parameter",
// "Invalid 'messages[2].content'", pydantic/FastAPI servers (vLLM, LiteLLM,
// LM Studio) "Field required", "Extra inputs are not permitted", "Input
// should be …", JSON-schema "is a required property", "Additional
// properties are not allowed", serde "unknown field `x`", Chinese gateways
// 参数错误, 参数校验失败, 不能为空. Read only with no status at all and only
// when no message rule decided (rule 28's place).
var requestShapeWords = newTable("request_shape_words",
	"unrecognized request argument", "invalid value:", "supported values are", "unknown parameter", "unsupported parameter", "unsupported value",
	"missing required parameter", "missing required field", "field required", "is a required property",
	"extra inputs are not permitted", "additional properties are not allowed", "unknown field `", "unexpected field",
	"validation error for", "input should be", "is not of type", "invalid type for", "invalid value for", "invalid 'messages",
	"invalid 'input", "invalid 'tools", "must be a string", "must be an array", "must be an object", "must be one of",
	"must not be empty", "cannot be empty", "can't be empty", "must be at least", "must be non-empty", "is not a valid enum",
	// fledger (issue 17 second blind set): Google's proto validation
	// ("Invalid JSON payload received. Unknown name "$schema" … Cannot find
	// field"), schema checks ("JSON schema is invalid"), parameters that
	// exclude each other ("`temperature` and `top_p` cannot both be
	// specified"), an unsupported feature ("… is unsupported"), output
	// bounds ("max_tokens: 64000 > 32000, which is the maximum allowed
	// number of output tokens").
	"invalid json payload", "cannot find field", "schema is invalid", "invalid schema", "invalid json schema", "cannot both be specified",
	"cannot be specified together", "mutually exclusive", "is not supported", "is unsupported", "are not supported", "not supported with",
	"maximum allowed number of output tokens", "maximum output tokens", "max output tokens", `\bmax_tokens\b`, "max_completion_tokens",
	"max_output_tokens",
	"参数错误", "参数校验", "参数不合法", "参数无效", "无效的参数", "非法参数", "缺少参数", "缺少必要参数", "不能为空", "格式错误", "格式不正确",
)

// sdkClassReason: the SDKs' status-class exceptions (openai-python,
// anthropic-sdk, LiteLLM) and the reason of their class. RateLimitError,
// AuthenticationError, APIConnectionError, APITimeoutError and
// ContextWindowExceededError are phrases of their own rules.
var sdkClassReason = map[string]Reason{
	"badrequesterror":          ReasonFormat,
	"unprocessableentityerror": ReasonFormat,
	"permissiondeniederror":    ReasonAuth,
	"notfounderror":            ReasonModelNotFound,
	"internalservererror":      ReasonServerError,
	"serviceunavailableerror":  ReasonOverloaded,
}

var sdkClasses = func() *table {
	var ps []string
	for k := range sdkClassReason {
		ps = append(ps, k)
	}
	sort.Strings(ps)
	return newTable("sdk_classes", wordBounded(ps)...)
}()

// textTypes: the API error types of typeReasons, as words in text.
var textTypes = func() *table {
	var ps []string
	for k := range typeReasons {
		ps = append(ps, k)
	}
	sort.Strings(ps)
	return newTable("text_types", wordBounded(ps)...)
}()

// invalidRequestLead: a bad-request class leading the message or a
// wrapper's clause ("OpenAI Error: Invalid parameter: …").
var invalidRequestLead = newPattern("invalid_request_lead",
	`(?:^|[:\]\n]\s*|\s-\s)["'{\s]*(?:invalid request|bad request|invalid parameters?|invalid argument|invalid params|validation error|invalid_request)\s*[:\-–]`,
	"invalid request", "bad request", "invalid parameter", "invalid argument", "invalid params", "validation error", "invalid_request")

func tableRule(tb *table, r Reason) func(*text, *msgCtx) (Reason, string, bool) {
	return func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := tb.find(&t.hits)
		return r, m, ok
	}
}

func finderRule(f finder, r Reason) func(*text, *msgCtx) (Reason, string, bool) {
	return func(t *text, _ *msgCtx) (Reason, string, bool) {
		m, ok := f.search(t)
		return r, m, ok
	}
}

func modelNotFoundMatch(t *text) (string, bool) {
	if m, ok := modelNotFoundPhrases.find(&t.hits); ok {
		return m, true
	}
	nf := notFound.in(&t.hits)
	if nf && http404.in(&t.hits) {
		return "404 … not found", true
	}
	if m, ok := firstOf(t, modelNotFoundSeq...); ok {
		return m, true
	}
	if nf && modelColon.in(&t.hits) {
		return "model: … not found", true
	}
	if invalidModel.in(&t.hits) && !invalidModelReference.in(&t.hits) {
		return "invalid model", true
	}
	if modelWord.in(&t.hits) && doesNotExist.in(&t.hits) {
		return "model … does not exist", true
	}
	if selectedModel.in(&t.hits) && nf {
		return "selected model … not found", true
	}
	for _, f := range modelGone {
		// OC-039 (OpenClaw parity): "The deployment does not exist or you
		// do not have access" names two conditions; the deployment shape
		// does not decide it.
		if f == deploymentMissing && orNoAccess.in(&t.hits) {
			continue
		}
		// fledger (issue 17 second blind set): a load that failed because
		// the runtime crashed or ran out of memory is the runtime's failure
		// (rule 16a), not a missing model (HB2-036, HB2-038: "llama runner
		// process has terminated … error loading model").
		if f == modelLoadFailed {
			if _, crashed := firstOf(t, runtimeFailure...); crashed {
				continue
			}
		}
		if m, ok := f.search(t); ok {
			return m, true
		}
	}
	return "", false
}

var orNoAccess = newTable("or_no_access", "or you do not have access", "or you don't have access", "or you don’t have access", "or you lack access")

// billingMatch is the billing table with its guards (ref §2.5 "billing").
func billingMatch(t *text) (string, bool) {
	if markdownHeadings(t.lower) > 1 {
		return "", false
	}
	if m, ok := billingPhrases.find(&t.hits); ok {
		return m, true
	}
	if m, ok := firstOf(t, billingMore...); ok {
		return m, true
	}
	if m, ok := has402Marker(t); ok {
		return m, true
	}
	if purchaseHint.in(&t.hits) {
		head := strings.TrimLeft(t.lower, " \t\r\n\"'[({:-*#>")
		for _, h := range billingHead {
			if strings.HasPrefix(head, h) {
				return h, true
			}
		}
	}
	return "", false
}

// billingUpsell: billing matches that name a way to pay, not a condition
// of the account.
var billingUpsell = map[string]bool{"payment method": true, "plans & billing": true}

// rateLimitNamed: a message that calls itself a rate limit (not OpenAI's
// "exceeded your current quota", which is its insufficient_quota).
var rateLimitNamed = newTable("rate_limit_named", "rate limit reached", "rate limit exceeded", "increase your rate limit", "ratelimiterror")

func isBilling(t *text) bool { _, ok := billingMatch(t); return ok }

func isAuth(t *text) bool {
	if authPhrases.in(&t.hits) || authPermanentPhrases.in(&t.hits) {
		return true
	}
	_, ok := firstOf(t, authMore...)
	return ok
}

func highConfidenceAuth(t *text) (string, bool) {
	if m, ok := authPermanentPhrases.find(&t.hits); ok {
		return m, true
	}
	if m, ok := authPermanentSeq.find(t); ok {
		return m, true
	}
	return authPermanentRe.find(t)
}

func rateLimitMatch(t *text) (string, bool) {
	if m, ok := rateLimitPhrases.find(&t.hits); ok {
		return m, true
	}
	if m, ok := rateLexicon.find(&t.hits); ok {
		return m, true
	}
	if m, ok := firstOf(t, rateMore...); ok {
		return m, true
	}
	m, ok := firstOf(t, status429InText, concurrencyLimit)
	if ok && m != "" && strings.Contains(m, "429") {
		// fledger (RE-008): a bare "429" status in the text is weaker evidence
		// than the provider's own words. Z.ai sends "429 The service may be
		// temporarily overloaded": that is the provider's capacity, not our
		// quota, so the overload rule (14) decides.
		if _, over := overloadedMatch(t); over {
			return "", false
		}
	}
	return m, ok
}

func overloadedMatch(t *text) (string, bool) {
	if m, ok := overloadedPhrases.find(&t.hits); ok {
		return m, true
	}
	if m, ok := atCapacity.find(&t.hits); ok {
		return m, true
	}
	if m, ok := modelWarming.find(&t.hits); ok {
		return m, true
	}
	if modelWarmingBare[t.bare] {
		return t.bare, true
	}
	return firstOf(t, overloadLexicon...)
}

func timeoutMatch(t *text) (string, bool) {
	if m, ok := timeoutPhrases.find(&t.hits); ok {
		return m, true
	}
	if timeoutBare[t.bare] {
		return t.bare, true
	}
	return firstOf(t, timeoutMore...)
}

// markdownHeadings counts lines starting with "## " (the billing guard
// against long assistant prose, ref §2.5).
func markdownHeadings(s string) int {
	n := 0
	if strings.HasPrefix(s, "## ") {
		n++
	}
	for i := 0; n < 2; {
		k := strings.Index(s[i:], "\n## ")
		if k < 0 {
			break
		}
		n++
		i += k + 1
	}
	return n
}
