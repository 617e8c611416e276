package classify

import "testing"

// A generic transport wrapper ("Request failed", "fetch failed",
// "Connection error.") does not hide what the error it wraps says (seed
// 004); alone, or around an error that says nothing, it is still a
// timeout. An AbortError whose body states a failure is that failure.
func TestClassify_GenericWrapperYieldsToTheWrappedError(t *testing.T) {
	cases := []struct {
		name string
		e    *ProviderError
		w    want
	}{
		{"401 inside Request failed", &ProviderError{Provider: "openai", Message: "Request failed",
			Cause: &ProviderError{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-***","type":"invalid_request_error","code":"invalid_api_key"}}`}},
			want{ReasonAuth, 401, DispositionFailover, 0, "status.401_403"}},
		{"credit balance inside Request failed", &ProviderError{Provider: "anthropic", Message: "Request failed",
			Cause: &ProviderError{Status: 400, Message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}},
			want{ReasonBilling, 400, DispositionFailover, 0, "msg11.billing"}},
		{"429 inside Request failed", &ProviderError{Provider: "openai", Message: "Request failed",
			Cause: &ProviderError{Status: 429, Message: "Too Many Requests"}},
			want{ReasonRateLimit, 429, DispositionFailover, 0, "status.429"}},
		{"402 inside fetch failed", &ProviderError{Provider: "openai", Message: "fetch failed",
			Cause: &ProviderError{Status: 402, Message: "pay up"}},
			want{ReasonBilling, 402, DispositionFailover, 0, "status.402"}},
		{"529 inside Connection error.", &ProviderError{Provider: "anthropic", Message: "Connection error.",
			Cause: &ProviderError{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
			want{ReasonOverloaded, 529, DispositionFailover, 0, "status.529"}},
		{"ECONNRESET inside fetch failed", &ProviderError{Message: "fetch failed",
			Cause: &ProviderError{Code: "ECONNRESET", Message: "read ECONNRESET"}},
			want{ReasonTimeout, 408, DispositionFailover, 0, "code.table"}},
		{"Request failed alone", &ProviderError{Message: "Request failed"},
			want{ReasonTimeout, 408, DispositionFailover, 0, "msg26.timeout"}},
		{"Request failed around nothing", &ProviderError{Message: "Request failed", Cause: &ProviderError{Name: "Error"}},
			want{ReasonTimeout, 408, DispositionFailover, 0, "msg26.timeout"}},
		{"AbortError with a rate limit body", &ProviderError{Provider: "anthropic", Name: "AbortError", Message: "The operation was aborted",
			Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}`},
			want{ReasonRateLimit, 429, DispositionFailover, 0, ""}},
		{"AbortError alone", &ProviderError{Name: "AbortError", Message: "The operation was aborted"},
			want{ReasonUnknown, 0, DispositionAbort, 0, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkExact(t, c.e, c.w) })
	}
}

// A code two providers document under one spelling (OpenAI's
// invalid_api_key, DashScope's InvalidApiKey) is credited to the table of
// the provider that sent it; what decides for other providers, and in
// text, is unchanged.
func TestClassify_ProviderCodeCreditedToTheSendersTable(t *testing.T) {
	for _, c := range []struct {
		name   string
		e      *ProviderError
		rule   string
		reason Reason // checked when set: the citation moves, the verdict must not
	}{
		{"openai invalid_api_key", &ProviderError{Provider: "openai", Body: `{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","code":"invalid_api_key"}}`}, "code.provider.openai", ""},
		{"openai model_not_found", &ProviderError{Provider: "openai", Status: 403, Body: `{"error":{"message":"Project does not have access to model gpt-5","type":"invalid_request_error","code":"model_not_found"}}`}, "code.provider.openai", ""},
		{"dashscope InvalidApiKey", &ProviderError{Provider: "dashscope", Body: `{"code":"InvalidApiKey","message":"Invalid API-key provided."}`}, "code.provider.dashscope", ""},
		// An OpenAI-compatible API sends OpenAI's spelling: its error cites
		// OpenAI's table, not DashScope's (whose InvalidApiKey it also
		// matches, separators and case aside); DashScope's own spelling
		// from anyone still cites DashScope's.
		{"groq invalid_api_key code", &ProviderError{Provider: "groq", Body: `{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}`}, "code.provider.openai", ReasonAuth},
		{"deepseek model_not_found code", &ProviderError{Provider: "deepseek", Body: `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`}, "code.provider.openai", ReasonModelNotFound},
		{"unnamed provider INVALID_API_KEY code", &ProviderError{Body: `{"error":{"message":"bad key","code":"INVALID_API_KEY"}}`}, "code.provider.openai", ReasonAuth},
		{"groq InvalidApiKey code", &ProviderError{Provider: "groq", Body: `{"code":"InvalidApiKey","message":"Invalid API-key provided."}`}, "code.provider.dashscope", ReasonAuth},
		// OpenAI's rows are OpenAI's alone and in code fields only: in
		// text, and for other providers, nothing changed.
		{"mistral 500 mentioning invalid_api_key", &ProviderError{Provider: "mistral", Status: 500, Message: "upstream said invalid_api_key for tenant"}, "status.5xx", ""},
		{"openai 429 mentioning model_not_found", &ProviderError{Provider: "openai", Status: 429, Message: "model_not_found"}, "status.429", ""},
		{"anthropic model_not_found text", &ProviderError{Provider: "anthropic", Status: 400, Message: "model_not_found: the model claude-x does not exist"}, "msg06.model_not_found", ""},
		{"deepseek invalid_api_key text", &ProviderError{Provider: "deepseek", Status: 400, Message: "invalid_api_key"}, "msg20.auth", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.e)
			if got.Evidence.Rule != c.rule {
				t.Fatalf("rule %s (reason %s), want %s", got.Evidence.Rule, got.Reason, c.rule)
			}
			if c.reason != "" && got.Reason != c.reason {
				t.Fatalf("reason %s, want %s", got.Reason, c.reason)
			}
		})
	}
}
