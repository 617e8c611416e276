package classify

import "testing"

// The issue 17 rule families, one table: provider code tables, overflow
// shapes, usage windows, the billing lexicon, precedence (provider code over
// wrapper status and text, the inner status), refusals and AbortError.
// Every case asserts reason, status, disposition and rule id.
func TestClassify_Issue17Families(t *testing.T) {
	cases := []struct {
		name string
		in   *ProviderError
		w    want
	}{
		// --- provider code tables (provider_codes.go) ---
		{"zhipu 1113 inside a wrapper's 500",
			&ProviderError{Provider: "zai", Status: 500, Message: `{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`},
			want{ReasonBilling, 500, DispositionFailover, 0, "code.provider.zhipu"}},
		{"zhipu 1113 found by host, no provider field",
			&ProviderError{Status: 500, Message: `upstream https://open.bigmodel.cn/api/paas/v4 said {"error":{"code":"1113","message":"Insufficient balance or no resource package. Please recharge."}}`},
			want{ReasonBilling, 500, DispositionFailover, 0, "code.provider.zhipu"}},
		{"zhipu 1301 is a refusal",
			&ProviderError{Provider: "zhipu", Status: 400, Message: `{"error":{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容，请您避免输入易产生敏感内容的提示语，感谢您的配合。"}}`},
			want{ReasonFormat, 400, DispositionRefusal, 0, ""}},
		{"mistral numeric 1300 is not zhipu's policy block",
			&ProviderError{Provider: "mistral", Status: 429, Message: `{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","code":"1300"}`},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "status.429"}},
		{"dashscope Arrearage under 400",
			&ProviderError{Status: 400, Code: "Arrearage", Message: "Access denied, please make sure your account is in good standing."},
			want{ReasonBilling, 400, DispositionFailover, 0, "code.provider.dashscope"}},
		{"dashscope AllocationQuota.FreeTierOnly under 403",
			&ProviderError{Status: 403, Message: `{"error":{"code":"AllocationQuota.FreeTierOnly","message":"The free tier of the model has been exhausted. If you wish to continue access the model on a paid basis, please disable the \"use free tier only\" mode in the management console."}}`},
			want{ReasonBilling, 403, DispositionFailover, 0, "code.provider.dashscope"}},
		{"dashscope DataInspectionFailed text code is a refusal",
			&ProviderError{Message: "<400> InternalError.Algo.DataInspectionFailed: Input data may contain inappropriate content."},
			want{ReasonFormat, 400, DispositionRefusal, 0, ""}},
		{"groq model_decommissioned",
			&ProviderError{Status: 400, Message: `{"error":{"message":"The model ` + "`mixtral-8x7b-32768`" + ` has been decommissioned and is no longer supported.","type":"invalid_request_error","code":"model_decommissioned"}}`},
			want{ReasonModelNotFound, 400, DispositionFailover, 0, "code.provider.groq"}},
		{"azure DeploymentNotFound",
			&ProviderError{Status: 404, Code: "DeploymentNotFound", Message: "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."},
			want{ReasonModelNotFound, 404, DispositionFailover, 0, ""}},
		{"together model_not_available under 400",
			&ProviderError{Status: 400, Message: `{"error":{"message":"Unable to access non-serverless model meta-llama/Llama-3-70b. Please visit https://api.together.ai/models to create and start a new dedicated endpoint for the model.","type":"invalid_request_error","code":"model_not_available"}}`},
			want{ReasonModelNotFound, 400, DispositionFailover, 0, "code.provider.together"}},
		{"openai billing_hard_limit_reached under 400",
			&ProviderError{Status: 400, Message: `{"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","code":"billing_hard_limit_reached"}}`},
			want{ReasonBilling, 400, DispositionFailover, 0, "code.provider.openai"}},
		{"bedrock AccessDeniedException is auth",
			&ProviderError{Status: 403, Message: "An error occurred (AccessDeniedException) when calling the InvokeModel operation: User: arn:aws:iam::123:user/x is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1::foundation-model/x"},
			want{ReasonAuth, 403, DispositionFailover, 0, ""}},
		{"generic ValidationException decides only when nothing else did",
			&ProviderError{Message: "An error occurred (ValidationException) when calling the Converse operation: The provided request is not valid"},
			want{ReasonFormat, 400, DispositionFailover, 0, "code.generic"}},
		{"gemini FAILED_PRECONDITION is weak auth",
			&ProviderError{Status: 400, Message: `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`},
			want{ReasonAuth, 400, DispositionFailover, 0, ""}},

		// --- context-overflow shapes (tables.go contextOverflowShapes) ---
		{"count exceeds limit",
			&ProviderError{Status: 400, Message: "the request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it"},
			want{ReasonContextOverflow, 400, DispositionCompaction, 0, ""}},
		{"subject exceeds configured limit",
			&ProviderError{Status: 400, Message: "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 292123 tokens."},
			want{ReasonContextOverflow, 400, DispositionCompaction, 0, ""}},
		{"TGI sum bound",
			&ProviderError{Status: 422, Message: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 1512. Given: 1300 `inputs` tokens and 500 `max_new_tokens`"},
			want{ReasonContextOverflow, 422, DispositionCompaction, 0, "msg08.context_overflow_shape"}},
		{"llama.cpp n_keep >= n_ctx",
			&ProviderError{Status: 400, Message: "the request exceeds the available context size, n_keep (15028) >= n_ctx (7424)"},
			want{ReasonContextOverflow, 400, DispositionCompaction, 0, ""}},
		{"dashscope input length range",
			&ProviderError{Status: 400, Message: "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 30720]"},
			want{ReasonContextOverflow, 400, DispositionCompaction, 0, "msg08.context_overflow_shape"}},
		{"an output range is not an overflow",
			&ProviderError{Status: 400, Message: "<400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 2000]"},
			want{ReasonFormat, 400, DispositionFailover, 0, ""}},
		{"output-only bound is not an overflow",
			&ProviderError{Status: 400, Message: "max_tokens must be less than or equal to 8192, the maximum allowed for this model"},
			want{ReasonFormat, 400, DispositionFailover, 0, "status.400_422"}},

		// --- usage windows without "limit"/"rate" ---
		{"exhausted your daily quota",
			&ProviderError{Message: "You have exhausted your daily quota. Please try again tomorrow."},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "msg12.periodic_limit"}},
		{"hit your limit, resets",
			&ProviderError{Message: "You've hit your limit · resets Feb 7, 11am (Europe/Berlin)"},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "msg12.periodic_limit"}},

		// --- billing lexicon ---
		{"chinese arrears under 403",
			&ProviderError{Status: 403, Message: "您的账户已欠费，请充值后重试"},
			want{ReasonBilling, 403, DispositionFailover, 0, "msg11.billing"}},
		{"continue on a paid basis",
			&ProviderError{Status: 403, Message: "The free tier has been used up. To continue using the model on a paid basis, enable billing."},
			want{ReasonBilling, 403, DispositionFailover, 0, ""}},
		{"leading 429 with a billing body is billing (OpenClaw parity)",
			&ProviderError{Message: "429 Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."},
			want{ReasonBilling, 429, DispositionFailover, 0, ""}},
		{"leading 429 with rate wording stays rate_limit",
			&ProviderError{Message: "429 Too many requests, slow down. Your balance is fine."},
			want{ReasonRateLimit, 429, DispositionFailover, 0, ""}},

		// --- refusals end the turn ---
		{"deepseek content exists risk",
			&ProviderError{Status: 400, Message: "Content Exists Risk"},
			want{ReasonFormat, 400, DispositionRefusal, 0, ""}},

		// --- inner status ---
		{"status written inside the text fills a gap",
			&ProviderError{Message: "Error code: 503 - {'error': {'message': 'no healthy upstream'}}"},
			want{ReasonServerError, 503, DispositionFailover, 0, "status.5xx"}},
		// The reason follows the provider's 429; the visible status stays
		// the explicit one (what the wrapper answered).
		{"wrapper 500 around the provider's 429",
			&ProviderError{Status: 500, Message: `proxy failed: {"error":{"code":429,"message":"quota window busy"}}`},
			want{ReasonRateLimit, 500, DispositionFailover, 0, "status.429"}},

		// --- AbortError without timeout evidence ---
		{"AbortError named in text is an abort",
			&ProviderError{Message: `LLM stream error {"error":"AbortError: This operation was aborted"}`},
			want{ReasonUnknown, 0, DispositionAbort, 0, "chain.abort"}},
		{"AbortError in code with a timeout cause is a timeout",
			&ProviderError{Code: "AbortError", Message: "This operation was aborted", Cause: &ProviderError{Name: "TimeoutError", Message: "The operation timed out."}},
			want{ReasonTimeout, 408, DispositionFailover, 0, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkExact(t, c.in, c.w) })
	}
}

// OC-039 parity: OpenClaw leaves "The deployment does not exist or you do
// not have access." unclassified (no status, no code), so fledger has no
// generic deployment phrase; Azure's documented code and its exact sentence
// decide.
func TestClassify_DeploymentWording(t *testing.T) {
	checkExact(t, &ProviderError{Message: "The deployment does not exist or you do not have access."},
		want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"})
	checkExact(t, &ProviderError{Status: 404, Code: "DeploymentNotFound", Message: "not found"},
		want{ReasonModelNotFound, 404, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Message: "The API deployment for this resource does not exist."},
		want{ReasonModelNotFound, 404, DispositionFailover, 0, "msg06.model_not_found"})
}

// lastTextStatus reads status shapes without a regex; the table pins each.
func TestLastTextStatus(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"error code: 429 - {...}", 429},
		{"status code 400 (no body)", 400},
		{"status_code=403", 403},
		{"http/1.1 503 service unavailable", 503},
		{"http/2 502 ", 502},
		{"<400> invalidparameter", 400},
		{"[429] slow down", 429},
		{"got 400 bad request then error 500", 500},
		{"error4000 is not a status", 0},
		{"model gpt-4 returned 4290 tokens", 0},
		{"request failed with status code 413", 413},
		{"api error:   502", 502},
		{"error:     502", 0}, // more than 4 non-word bytes
		{"442 items", 0},
	} {
		if got := lastTextStatus(c.in); got != c.want {
			t.Errorf("lastTextStatus(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// Shapes are bounded: a long text full of anchors costs at most
// shapeMaxAnchors windows per anchor.
func TestShapes_ManyAnchorsStayBounded(t *testing.T) {
	msg := ""
	for i := 0; i < 5000; i++ {
		msg += "quota exceeded; "
	}
	msg += "input tokens exceed the configured limit"
	got := Classify(&ProviderError{Status: 400, Message: msg})
	// The overflow wording sits beyond the anchors tried; a rate-limit
	// phrase decides instead. What matters is that this returns quickly.
	if got.Reason == "" {
		t.Fatal("no reason")
	}
}
