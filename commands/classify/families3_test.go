package classify

import "testing"

// TestClassify_Blind3Families: the families the third blind set's misses
// showed (docs/classification.md "Third blind-set families"), each as
// sibling wordings rather than the set's own errors, so a rule that only
// matched its vector fails here.
func TestClassify_Blind3Families(t *testing.T) {
	type tc struct {
		name string
		in   *ProviderError
		w    want
	}
	format := []tc{
		{"pydantic field required under 422",
			&ProviderError{Status: 422, Message: `{"detail":[{"type":"missing","loc":["body","messages"],"msg":"Field required","input":{}}]}`},
			want{ReasonFormat, 422, DispositionFailover, 0, "msg24.format"}},
		{"json schema additional properties",
			&ProviderError{Status: 400, Message: `{"error":{"message":"Additional properties are not allowed ('foo' was unexpected)","type":"invalid_request_error"}}`},
			want{ReasonFormat, 400, DispositionFailover, 0, "msg24.format"}},
		{"json schema required property, no status",
			&ProviderError{Message: `'messages' is a required property`},
			want{ReasonFormat, 400, DispositionFailover, 0, "msg24.format"}},
		{"pydantic extra_forbidden is no auth",
			&ProviderError{Status: 422, Message: `{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}`},
			want{ReasonFormat, 422, DispositionFailover, 0, "msg24.format"}},
	}
	auth := []tc{
		{"forbidden as a word is still auth",
			&ProviderError{Message: "This operation is forbidden for your API key."},
			want{ReasonAuth, 401, DispositionFailover, 0, "msg20.auth"}},
		{"not authenticated",
			&ProviderError{Message: "Not authenticated. Please provide an API key."},
			want{ReasonAuth, 401, DispositionFailover, 0, "msg20.auth"}},
		{"bedrock use case details not submitted under 400",
			&ProviderError{Status: 400, Message: "Model use case details have not been submitted for this account. Fill out the Anthropic use case details form before using the model."},
			want{ReasonAuth, 400, DispositionFailover, 0, "msg20.auth"}},
		{"account disabled for violating the terms",
			&ProviderError{Message: "Your account has been disabled for violating our Terms of Service."},
			want{ReasonAuthPermanent, 403, DispositionFailover, 0, "msg19.auth_permanent"}},
		{"banned for a usage-policy violation is an account condition, no refusal",
			&ProviderError{Message: "Your account has been permanently banned due to violation of our usage policies."},
			want{ReasonAuthPermanent, 403, DispositionFailover, 0, "msg19.auth_permanent"}},
	}
	billing := []tc{
		{"credits used up",
			&ProviderError{Message: "You have used up your credits for this month. Upgrade to continue."},
			want{ReasonBilling, 402, DispositionFailover, 0, "msg11.billing"}},
		{"a positive balance is required",
			&ProviderError{Message: "Your organization must have a positive balance to use this model."},
			want{ReasonBilling, 402, DispositionFailover, 0, "msg11.billing"}},
		{"payment method upsell inside a named rate limit is a rate limit",
			&ProviderError{Status: 429, Message: "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. You can increase your rate limit by adding a payment method to your account."},
			want{ReasonRateLimit, 429, DispositionFailover, 2000, "status.429"}},
		{"payment method with exceeded quota stays billing",
			&ProviderError{Status: 429, Message: "You exceeded your current quota, please check your plan and billing details. Add a payment method."},
			want{ReasonBilling, 429, DispositionFailover, 0, "msg11.billing"}},
	}
	model := []tc{
		{"model at end of life under 410",
			&ProviderError{Status: 410, Message: "This model has reached end-of-life and is no longer served."},
			want{ReasonModelNotFound, 410, DispositionFailover, 0, "msg06.model_not_found"}},
		{"model not available on this server",
			&ProviderError{Message: "Model claude-2 is not available on this server."},
			want{ReasonModelNotFound, 404, DispositionFailover, 0, "msg06.model_not_found"}},
		{"not available on a plan is billing",
			&ProviderError{Message: "The model llama3 is not available on your current plan."},
			want{ReasonBilling, 402, DispositionFailover, 0, "msg11.billing"}},
		{"temporarily not available is not a missing model",
			&ProviderError{Message: "The model is temporarily not available on this endpoint"},
			want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"}},
		{"a deprecation warning is not a missing model",
			&ProviderError{Message: "The model `text-davinci-003` has been deprecated and will be removed on 2024-01-04"},
			want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"}},
		{"an api version not found is the request",
			&ProviderError{Status: 400, Message: "Unsupported API version 2022-01-01. Invalid api-version: version not found"},
			want{ReasonFormat, 400, DispositionFailover, 0, "status.400_422"}},
		{"relay 503 with no channel for the model",
			&ProviderError{Status: 503, Message: "no available channel for model gpt-4o under group default (distributor)"},
			want{ReasonModelNotFound, 503, DispositionFailover, 0, "msg06.model_not_found"}},
	}
	cloudflare := []tc{
		{"5007 no such model",
			&ProviderError{Provider: "cloudflare", Message: "AiError: 5007: No such model @cf/meta/llama-9 or task"},
			want{ReasonModelNotFound, 404, DispositionFailover, 0, "code.provider.cloudflare"}},
		{"3036 daily allocation",
			&ProviderError{Provider: "cloudflare-workers-ai", Message: "3036: Account limited: You have used up your daily free allocation of 10,000 neurons."},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "code.provider.cloudflare"}},
		{"3040 out of capacity in the errors array, family from AiError",
			&ProviderError{Message: `{"errors":[{"message":"AiError: 3040: Capacity temporarily exceeded, please try again.","code":3040}],"success":false}`},
			want{ReasonOverloaded, 503, DispositionFailover, 0, "code.provider.cloudflare"}},
		{"a 4-digit count elsewhere is no code",
			&ProviderError{Provider: "cloudflare", Message: "Input is 5007 tokens long"},
			want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"}},
	}
	rate := []tc{
		{"litellm router cooldown",
			&ProviderError{Message: "Router: no deployments available for model=gpt-4; Try again in 60 seconds"},
			want{ReasonRateLimit, 429, DispositionFailover, 60000, "msg13.rate_limit"}},
		{"a stated delay and nothing else",
			&ProviderError{Message: "Request failed, please try again in 30 seconds"},
			want{ReasonRateLimit, 429, DispositionFailover, 30000, "msg29a.retry_hint"}},
		{"a named failure beats the delay",
			&ProviderError{Message: "Service unavailable, please try again in 30 seconds"},
			want{ReasonOverloaded, 503, DispositionFailover, 30000, "msg14.overloaded"}},
	}
	empty := []tc{
		{"no generations found",
			&ProviderError{Message: "ValueError: No generations found in stream."},
			want{ReasonEmptyResponse, 0, DispositionFailover, 0, "msg28a.empty_response"}},
		{"empty or invalid response",
			&ProviderError{Message: "The provider returned an empty or invalid response."},
			want{ReasonEmptyResponse, 0, DispositionFailover, 0, "msg28a.empty_response"}},
	}
	refusal := []tc{
		{"blocked for reason SAFETY",
			&ProviderError{Message: "Response was blocked for reason: SAFETY"},
			want{ReasonFormat, 400, DispositionRefusal, 0, "disposition.refusal_text"}},
		{"finishReason RECITATION in a body",
			&ProviderError{Message: `{"candidates":[{"finishReason":"RECITATION"}]}`},
			want{ReasonFormat, 400, DispositionRefusal, 0, "disposition.refusal_text"}},
		{"blocked due to OTHER is still no refusal",
			&ProviderError{Message: "Response was blocked due to OTHER"},
			want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"}},
	}
	runtime := []tc{
		{"ollama error while running the model",
			&ProviderError{Message: `{"error":"an error was encountered while running the model: CUDA error: an illegal memory access"}`},
			want{ReasonServerError, 500, DispositionFailover, 0, "msg16a.runtime_failure"}},
	}
	// The fourth blind set's dev half (HC1-071, HC2-027).
	dev4 := []tc{
		{"an api key phrase wrapped across lines under 400",
			&ProviderError{Status: 400, Message: "Message: 400 \"Invalid API\n    key provided. Check your settings.\""},
			want{ReasonAuth, 400, DispositionFailover, 0, "msg20.auth"}},
		{"a concurrency limit under 403 permission_error is a rate limit",
			&ProviderError{Status: 403, Message: `{"error":{"message":"Concurrent request limit reached for this project, wait for running requests to finish.","type":"permission_error"}}`},
			want{ReasonRateLimit, 403, DispositionFailover, 0, "msg13.rate_limit"}},
		{"a 403 that only echoes 429 words in a number stays auth",
			&ProviderError{Status: 403, Message: "Error 403 (upstream said 429)"},
			want{ReasonAuth, 403, DispositionFailover, 0, "status.401_403"}},
	}
	// The issue 17 fresh-user pass.
	fresh := []tc{
		{"a count over a per-minute rate limit is a rate limit, not an overflow (LiteLLM 500 around Anthropic)",
			&ProviderError{Status: 500, Message: `litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			want{ReasonRateLimit, 500, DispositionFailover, 0, "msg13.rate_limit"}},
		{"a count over a daily rate limit, no status",
			&ProviderError{Message: "Number of request tokens has exceeded your daily rate limit"},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "msg13.rate_limit"}},
		{"the provider's rate_limit_error type beats a wrapper's 500",
			&ProviderError{Provider: "anthropic", Status: 500, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`},
			want{ReasonRateLimit, 500, DispositionFailover, 0, "msg13.rate_limit"}},
		{"rate words alone under a 500 stay server_error (OpenClaw's 5xx rule)",
			&ProviderError{Status: 500, Message: "upstream rate limiter crashed"},
			want{ReasonServerError, 500, DispositionFailover, 0, "status.5xx"}},
		{"a Chinese token count over the model's maximum is an overflow",
			&ProviderError{Status: 400, Message: "请求的token数超过了模型的最大限制"},
			want{ReasonContextOverflow, 400, DispositionCompaction, 0, "msg08.context_overflow"}},
		{"a Chinese token count over a per-minute quota is not",
			&ProviderError{Status: 429, Message: "token数超过每分钟限制"},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "status.429"}},
		{"an epoch X-RateLimit-Reset is a time, not a delay of 56 years",
			&ProviderError{Status: 429, Message: "Too Many Requests", Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767333840"},
				ReceivedAt: resetNow},
			want{ReasonRateLimit, 429, DispositionFailover, 3 * 3600 * 1000, "status.429"}},
		{"an epoch in milliseconds too",
			&ProviderError{Status: 429, Message: "Too Many Requests", Headers: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1767330000000"},
				ReceivedAt: resetNow},
			want{ReasonRateLimit, 429, DispositionFailover, 116 * 60 * 1000, "status.429"}},
	}
	for _, fam := range []struct {
		name  string
		cases []tc
	}{{"format", format}, {"auth", auth}, {"billing", billing}, {"model", model}, {"cloudflare", cloudflare}, {"rate", rate}, {"empty", empty}, {"refusal", refusal}, {"runtime", runtime}, {"dev4", dev4}, {"fresh", fresh}} {
		for _, c := range fam.cases {
			t.Run(fam.name+"/"+c.name, func(t *testing.T) { checkExact(t, c.in, c.w) })
		}
	}
}
