package classify

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// want is an exact expectation for one classification.
type want struct {
	reason      Reason
	status      int
	disposition Disposition
	retryMs     int64
	rule        string
}

func checkExact(t *testing.T, e *ProviderError, w want) Result {
	t.Helper()
	got := Classify(e)
	if got.Reason != w.reason || got.Status != w.status || got.Disposition != w.disposition || got.RetryAfterMs != w.retryMs {
		t.Fatalf("got reason=%s status=%d disposition=%s retry_after_ms=%d (rule %s, field %s, match %q)\nwant reason=%s status=%d disposition=%s retry_after_ms=%d",
			got.Reason, got.Status, got.Disposition, got.RetryAfterMs, got.Evidence.Rule, got.Evidence.Field, got.Evidence.Match,
			w.reason, w.status, w.disposition, w.retryMs)
	}
	if w.rule != "" && got.Evidence.Rule != w.rule {
		t.Fatalf("rule %s, want %s", got.Evidence.Rule, w.rule)
	}
	return got
}

func TestClassify_402UsageWindowIsRateLimit(t *testing.T) {
	for _, msg := range []string{
		"Weekly usage limit exhausted.",
		"Daily limit reached, resets tomorrow.",
		"Organization spending limit exceeded.",
		"HTTP 402: request reached organization usage limit, try again later",
	} {
		t.Run(msg, func(t *testing.T) {
			checkExact(t, &ProviderError{Status: 402, Message: msg}, want{ReasonRateLimit, 402, DispositionFailover, 0, "status.402"})
		})
	}
}

func TestClassify_402ExplicitBillingBeatsUsageWindow(t *testing.T) {
	checkExact(t, &ProviderError{Status: 402, Message: "Your usage limit has been reached. Please upgrade your plan."},
		want{ReasonBilling, 402, DispositionFailover, 0, "status.402"})
	checkExact(t, &ProviderError{Status: 402, Message: "Insufficient credits. Organization limit reached."},
		want{ReasonBilling, 402, DispositionFailover, 0, "status.402"})
}

func TestClassify_Bare402IsBilling(t *testing.T) {
	checkExact(t, &ProviderError{Status: 402}, want{ReasonBilling, 402, DispositionFailover, 0, "status.402"})
}

func TestClassify_429WithBillingTextIsBilling(t *testing.T) {
	checkExact(t, &ProviderError{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota, please check your plan and billing details."},
		want{ReasonBilling, 429, DispositionFailover, 0, ""})
}

func TestClassify_429AmbiguousBalanceIsRateLimitExceptForXAIMoonshotKimi(t *testing.T) {
	checkExact(t, &ProviderError{Status: 429, Message: "insufficient account balance"}, want{ReasonRateLimit, 429, DispositionFailover, 0, "status.429"})
	for _, p := range []string{"xai", "moonshot", "kimi-coding"} {
		checkExact(t, &ProviderError{Provider: p, Status: 429, Message: "insufficient account balance"}, want{ReasonBilling, 429, DispositionFailover, 0, ""})
	}
}

func TestClassify_429WithOverloadTextIsOverloaded(t *testing.T) {
	checkExact(t, &ProviderError{Provider: "zai", Status: 429, Code: "1305", Message: "429 The service may be temporarily overloaded, please try again later"},
		want{ReasonOverloaded, 429, DispositionFailover, 0, "status.429_overloaded"})
}

func TestClassify_400WithoutBodyIsUnclassified(t *testing.T) {
	checkExact(t, &ProviderError{Status: 400}, want{ReasonUnclassified, 400, DispositionFailover, 0, "chain.unclassified"})
	checkExact(t, &ProviderError{Status: 422, Message: "422 status code (no body)"}, want{ReasonUnclassified, 422, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Status: 400, Message: "Bad Request"}, want{ReasonFormat, 400, DispositionFailover, 0, "status.400_422"})
}

func TestClassify_5xxMapping(t *testing.T) {
	cases := map[int]Reason{500: ReasonServerError, 502: ReasonServerError, 503: ReasonServerError, 521: ReasonServerError, 523: ReasonServerError,
		499: ReasonTimeout, 504: ReasonTimeout, 522: ReasonTimeout, 524: ReasonTimeout, 529: ReasonOverloaded, 408: ReasonTimeout, 410: ReasonTimeout}
	for st, r := range cases {
		got := Classify(&ProviderError{Status: st})
		if got.Reason != r || got.Status != st {
			t.Errorf("bare %d: %s/%d, want %s", st, got.Reason, got.Status, r)
		}
	}
}

func TestClassify_404KeepsSpecificBodies(t *testing.T) {
	checkExact(t, &ProviderError{Message: "HTTP 404: No body"}, want{ReasonModelNotFound, 404, DispositionFailover, 0, "status.404"})
	checkExact(t, &ProviderError{Message: "HTTP 404: session not found"}, want{ReasonSessionExpired, 404, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Message: "HTTP 404: insufficient credits"}, want{ReasonBilling, 404, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Message: "HTTP 404: INVALID_ARGUMENT: input exceeds the maximum number of tokens"}, want{ReasonContextOverflow, 404, DispositionCompaction, 0, ""})
}

func TestClassify_401403AuthPermanentAndBilling(t *testing.T) {
	checkExact(t, &ProviderError{Status: 401, Message: "Unauthorized"}, want{ReasonAuth, 401, DispositionFailover, 0, "status.401_403"})
	checkExact(t, &ProviderError{Status: 403, Message: "Your api key has been revoked"}, want{ReasonAuthPermanent, 403, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Status: 401, Code: "account_deactivated", Message: "deactivated"}, want{ReasonAuthPermanent, 401, DispositionFailover, 0, "code.table"})
	checkExact(t, &ProviderError{Provider: "openrouter", Status: 403, Message: "Key limit exceeded"}, want{ReasonBilling, 403, DispositionFailover, 0, "plugin.openrouter.key_limit"})
	checkExact(t, &ProviderError{Status: 403, Message: "Key limit exceeded"}, want{ReasonAuth, 403, DispositionFailover, 0, "status.401_403"})
}

func TestClassify_RequestSizeCeilingFailsOverWhateverTheStatus(t *testing.T) {
	for _, st := range []int{413, 429, 400} {
		got := checkExact(t, &ProviderError{Status: st, Message: "Request too large for model on tokens per minute (TPM): Limit 12000, Requested 14137"},
			want{ReasonContextOverflow, st, DispositionFailover, 0, "signal.ceiling"})
		if c := got.RequestSizeCeiling; c == nil || c.LimitTokens != 12000 || c.RequestedTokens != 14137 {
			t.Fatalf("ceiling = %+v", c)
		}
	}
	// A token count above 2^53 − 1 (stored as a JSON number, which
	// JavaScript would round) is no real count: no ceiling is read.
	for _, msg := range []string{
		"Request too large for model on tokens per minute (TPM): Limit 12000, Requested 9007199254740992",
		"Request too large for model on tokens per minute (TPM): Limit 9007199254740992, Requested 9007199254740993",
	} {
		if got := Classify(&ProviderError{Status: 413, Message: msg}); got.RequestSizeCeiling != nil {
			t.Errorf("%s: ceiling %+v", msg, got.RequestSizeCeiling)
		}
	}
	got := Classify(&ProviderError{Status: 413, Message: "Request too large for model on tokens per minute (TPM): Limit 12000, Requested 9007199254740991"})
	if c := got.RequestSizeCeiling; c == nil || c.RequestedTokens != 9007199254740991 {
		t.Errorf("ceiling at 2^53 − 1: %+v", c)
	}
}

func TestClassify_ContextOverflowIsCompaction(t *testing.T) {
	got := checkExact(t, &ProviderError{Status: 400, Message: "prompt is too long: 219898 tokens > 200000 maximum"},
		want{ReasonContextOverflow, 400, DispositionCompaction, 0, "msg08.context_overflow"})
	if got.RequestSizeCeiling != nil {
		t.Fatal("no ceiling expected")
	}
}

func TestClassify_TPMHintWithoutCeilingIsRateLimit(t *testing.T) {
	checkExact(t, &ProviderError{Status: 429, Message: "Rate limit reached on tokens per min (TPM): Limit 10000, Used 8554, Requested 3082. Please try again in 9.816s."},
		want{ReasonRateLimit, 429, DispositionFailover, 9816, "status.429"})
}

func TestClassify_BedrockServiceUnavailableInside400IsOverloaded(t *testing.T) {
	checkExact(t, &ProviderError{Status: 400, Message: "Bad response code, expected 200: {'status_code': 400, 'headers': {':exception-type': 'serviceUnavailableException'}, 'body': b'{}'}"},
		want{ReasonOverloaded, 400, DispositionFailover, 0, ""})
}

func TestClassify_OpenRouterRawBeatsWrapper(t *testing.T) {
	raw := `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"supports at most 1 image\"}}"}}}`
	got := checkExact(t, &ProviderError{Provider: "openrouter", Status: 400, Message: raw}, want{ReasonFormat, 400, DispositionFailover, 0, "msg28.json_type"})
	if got.Evidence.Field != "message#error.metadata.raw.error.type" {
		t.Fatalf("field %q", got.Evidence.Field)
	}
	checkExact(t, &ProviderError{Provider: "openrouter", Message: "Provider returned error"}, want{ReasonTimeout, 408, DispositionFailover, 0, "plugin.openrouter.provider_returned_error"})
	checkExact(t, &ProviderError{Provider: "anthropic", Message: "Provider returned error"}, want{ReasonUnclassified, 0, DispositionFailover, 0, ""})
}

func TestClassify_ProviderFinishReasonErrorIsServerError(t *testing.T) {
	for _, m := range []string{"Unhandled stop reason: error", "stop reason: error", "reason: error", "Provider finish_reason: error"} {
		checkExact(t, &ProviderError{Message: m}, want{ReasonServerError, 500, DispositionFailover, 0, "msg15.finish_reason_error"})
	}
	for _, m := range []string{"Provider finish_reason: abort", "Unhandled stop reason: network_error", "finish_reason: malformed_response"} {
		checkExact(t, &ProviderError{Message: m}, want{ReasonTimeout, 408, DispositionFailover, 0, "msg26.timeout"})
	}
}

func TestClassify_ExactMessages(t *testing.T) {
	checkExact(t, &ProviderError{Message: "An unknown error occurred"}, want{ReasonTimeout, 408, DispositionFailover, 0, "msg21.unknown_error_occurred"})
	checkExact(t, &ProviderError{Message: "Unknown error (no error details in response)"}, want{ReasonNoErrorDetails, 0, DispositionFailover, 0, "msg25.no_error_details"})
	checkExact(t, &ProviderError{Message: "FailoverError: Unknown error (no error details in response)"}, want{ReasonNoErrorDetails, 0, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Message: "TypeError: terminated"}, want{ReasonTimeout, 408, DispositionFailover, 0, "msg26.timeout"})
}

func TestClassify_EmptyAndUnclassified(t *testing.T) {
	checkExact(t, nil, want{ReasonEmptyResponse, 0, DispositionFailover, 0, "chain.empty_response"})
	checkExact(t, &ProviderError{}, want{ReasonEmptyResponse, 0, DispositionFailover, 0, "chain.empty_response"})
	checkExact(t, &ProviderError{Provider: "openai", Model: "gpt-5", Headers: map[string]string{"x": "y"}}, want{ReasonEmptyResponse, 0, DispositionFailover, 0, ""})
	got := checkExact(t, &ProviderError{Message: "something odd happened"}, want{ReasonUnclassified, 0, DispositionFailover, 0, "chain.unclassified"})
	if got.Evidence.Match != "something odd happened" {
		t.Fatalf("unclassified keeps the preview: %q", got.Evidence.Match)
	}
}

func TestClassify_TLSCertificateOnlyWithoutStatus(t *testing.T) {
	checkExact(t, &ProviderError{Code: "CERT_HAS_EXPIRED", Message: "certificate has expired"}, want{ReasonTLSCertificate, 502, DispositionFailover, 0, "signal.tls"})
	checkExact(t, &ProviderError{Status: 502, Message: "self signed certificate in certificate chain"}, want{ReasonServerError, 502, DispositionFailover, 0, ""})
}

func TestClassify_HTMLErrorPageByStatusOnly(t *testing.T) {
	page := "<!DOCTYPE html><html><body>insufficient credits; rate limit</body></html>"
	checkExact(t, &ProviderError{Status: 503, Message: page}, want{ReasonServerError, 503, DispositionFailover, 0, "signal.html"})
	checkExact(t, &ProviderError{Status: 524, Body: page}, want{ReasonTimeout, 524, DispositionFailover, 0, "signal.html"})
}

func TestClassify_RefusalIsADisposition(t *testing.T) {
	got := checkExact(t, &ProviderError{Status: 400, Code: "content_filter", Message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy."},
		want{ReasonFormat, 400, DispositionRefusal, 0, "status.400_422"})
	if got.Evidence.Disposition == nil || got.Evidence.Disposition.Rule != "disposition.refusal_code" {
		t.Fatalf("disposition evidence %+v", got.Evidence.Disposition)
	}
	checkExact(t, &ProviderError{Status: 200, Message: "prompt_feedback: block_reason: SAFETY"}, want{ReasonEmptyResponse, 200, DispositionRefusal, 0, "status.2xx"})
}

func TestClassify_AbortAndCoordinationStop(t *testing.T) {
	checkExact(t, &ProviderError{Name: NameAbort, Message: "This operation was aborted"}, want{ReasonUnknown, 0, DispositionAbort, 0, "chain.abort"})
	checkExact(t, &ProviderError{Name: NameAbort, Message: "Request was aborted."}, want{ReasonTimeout, 408, DispositionFailover, 0, "chain.timeout_name"})
	checkExact(t, &ProviderError{Name: NameAbort, Message: "aborted", Cause: &ProviderError{Status: 429, Message: "rate limit"}},
		want{ReasonRateLimit, 429, DispositionFailover, 0, ""})
	checkExact(t, &ProviderError{Name: "ActiveTurnClaimError", Message: "turn already claimed; 429 rate limit"}, want{ReasonUnknown, 0, DispositionCoordination, 0, "chain.coordination"})
}

func TestClassify_CauseChain(t *testing.T) {
	got := checkExact(t, &ProviderError{Message: "turn failed", Cause: &ProviderError{Message: "call failed", Cause: &ProviderError{Status: 402, Message: "insufficient credits"}}},
		want{ReasonBilling, 402, DispositionFailover, 0, "status.402"})
	if got.Evidence.Field != "cause[2].message" {
		t.Fatalf("field %q", got.Evidence.Field)
	}
	// A top-level overflow defers to a nested verdict (reference §2.7 step 3).
	checkExact(t, &ProviderError{Message: "context overflow: too big", Cause: &ProviderError{Message: "fetch failed"}}, want{ReasonTimeout, 408, DispositionFailover, 0, ""})
	// A format verdict over a nested no-body 400 is no verdict (step 4).
	checkExact(t, &ProviderError{Message: "invalid request format", Cause: &ProviderError{Status: 400}}, want{ReasonUnclassified, 400, DispositionFailover, 0, ""})
}

func TestClassify_CyclicCauseTerminates(t *testing.T) {
	a := &ProviderError{Message: "wrapper a"}
	b := &ProviderError{Message: "wrapper b", Cause: a}
	a.Cause = b
	got := Classify(a)
	if got.Reason != ReasonUnclassified {
		t.Fatalf("reason %s", got.Reason)
	}
}

func TestClassify_10000DeepCauseChain(t *testing.T) {
	var e *ProviderError
	for i := 0; i < 10000; i++ {
		e = &ProviderError{Message: "wrapper", Cause: e}
	}
	e.Cause.Cause.Status = 429 // within the first 25 levels
	got := Classify(e)
	if got.Reason != ReasonRateLimit {
		t.Fatalf("reason %s", got.Reason)
	}
	var deep *ProviderError
	for i := 0; i < 10000; i++ {
		deep = &ProviderError{Message: "wrapper", Cause: deep}
	}
	if r := Classify(deep).Reason; !r.Valid() {
		t.Fatalf("invalid reason %q", r)
	}
}

func TestClassify_10MBMessage(t *testing.T) {
	big := strings.Repeat("a quick brown fox ", 600_000) // ~10.8 MB
	cases := []struct {
		e    *ProviderError
		want Reason
	}{
		{&ProviderError{Status: 400, Message: "prompt is too long " + big}, ReasonContextOverflow},
		{&ProviderError{Status: 400, Message: big + " prompt is too long"}, ReasonContextOverflow}, // the tail window
		{&ProviderError{Message: big}, ReasonUnclassified},
		{&ProviderError{Status: 503, Body: "{\"error\":{\"message\":\"" + big + "\"}}"}, ReasonServerError},
		{&ProviderError{Message: strings.Repeat("{\"a\":", 1_000_000)}, ReasonUnclassified},
	}
	for i, c := range cases {
		start := time.Now()
		got := Classify(c.e)
		if got.Reason != c.want {
			t.Errorf("case %d: %s, want %s", i, got.Reason, c.want)
		}
		if len(got.Evidence.Match) > 4*matchPreview+8 {
			t.Errorf("case %d: evidence not cut: %d bytes", i, len(got.Evidence.Match))
		}
		t.Logf("case %d: %v", i, time.Since(start))
	}
}

func TestClassify_EvidenceIsRedacted(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Ab3", 20)
	got := Classify(&ProviderError{Message: "weird failure for key " + key + " and user alice@example.com"})
	if strings.Contains(got.Evidence.Match, key) || strings.Contains(got.Evidence.Match, "alice@") {
		t.Fatalf("secret in evidence: %q", got.Evidence.Match)
	}
	got = Classify(&ProviderError{Status: 401, Code: key})
	if strings.Contains(got.Evidence.Match, key) {
		t.Fatalf("secret in evidence: %q", got.Evidence.Match)
	}
}

func TestClassify_DeterministicAndConcurrent(t *testing.T) {
	vs := loadVectors(t, sharedVectorsPath(t))
	first := make([][]byte, len(vs))
	for i, v := range vs {
		first[i], _ = json.Marshal(Classify(v.Input))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, v := range vs {
				b, _ := json.Marshal(Classify(v.Input))
				if string(b) != string(first[i]) {
					t.Errorf("%s: not deterministic:\n%s\n%s", v.ID, first[i], b)
				}
			}
		}()
	}
	wg.Wait()
}

func TestClassify_RetryAfterSources(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	cases := []struct {
		name string
		e    *ProviderError
		want int64
		from string
	}{
		{"seconds", &ProviderError{Status: 429, Headers: map[string]string{"Retry-After": "12"}}, 12000, "headers.retry-after"},
		{"fractional seconds", &ProviderError{Status: 429, Headers: map[string]string{"retry-after": "0.25"}}, 250, "headers.retry-after"},
		{"ms header first", &ProviderError{Status: 429, Headers: map[string]string{"retry-after": "9", "Retry-After-Ms": "1200"}}, 1200, "headers.retry-after-ms"},
		{"azure", &ProviderError{Status: 429, Headers: map[string]string{"x-ms-retry-after-ms": "800"}}, 800, "headers.x-ms-retry-after-ms"},
		{"http date", &ProviderError{Status: 429, Headers: map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:05:30 GMT"}}, 90000, "headers.retry-after"},
		{"past http date", &ProviderError{Status: 429, Headers: map[string]string{"Retry-After": "Fri, 02 Jan 2026 03:00:00 GMT"}}, 0, "headers.retry-after"},
		{"body try again", &ProviderError{Status: 429, Message: "Please try again in 50.6s."}, 50600, "message"},
		{"body retry in", &ProviderError{Status: 429, Message: "Please retry in 20s"}, 20000, "message"},
		{"body minutes", &ProviderError{Status: 429, Message: "try again in 1m47.5854s"}, 107586, "message"},
		{"body words", &ProviderError{Status: 429, Message: "Please retry after 86400 seconds."}, 86400000, "message"},
		{"cause header", &ProviderError{Message: "wrapped", Cause: &ProviderError{Status: 429, Headers: map[string]string{"retry-after": "3"}}}, 3000, "cause[1].headers.retry-after"},
		{"capped", &ProviderError{Status: 429, Headers: map[string]string{"retry-after": "99999999999"}}, maxRetryAfterMs, "headers.retry-after"},
		{"client retrying notice", &ProviderError{Status: 529, Message: "Retrying in 4 seconds…"}, 0, ""},
		{"garbage", &ProviderError{Status: 429, Headers: map[string]string{"retry-after": "soon"}}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ClassifyAt(c.e, now)
			if got.RetryAfterMs != c.want || got.Evidence.RetryAfter != c.from {
				t.Fatalf("retry_after_ms=%d from %q, want %d from %q", got.RetryAfterMs, got.Evidence.RetryAfter, c.want, c.from)
			}
		})
	}
}

func TestParseHumanDuration(t *testing.T) {
	cases := map[string]int64{
		"50.597142857s. visit": 50598, "9m38.016s": 578016, "86400 seconds": 86400000, "20 ms": 20,
		"2 hours": 7200000, "1 minute 30 seconds": 90000, "3s": 3000, "1.5 min": 90000,
	}
	for in, want := range cases {
		if got, ok := parseHumanDuration(in); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "a moment", "july 3", "5 months"} {
		if got, ok := parseHumanDuration(in); ok {
			t.Errorf("%q: %d, want no duration", in, got)
		}
	}
}

func TestReasons_OrderAndStatusMap(t *testing.T) {
	want := "auth auth_permanent format rate_limit overloaded billing server_error timeout tls_certificate context_overflow model_not_found session_expired empty_response no_error_details unclassified unknown"
	var got []string
	for _, r := range Reasons() {
		got = append(got, string(r))
		if p, err := ParseReason(string(r)); err != nil || p != r {
			t.Errorf("ParseReason(%q) = %q, %v", r, p, err)
		}
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("Reasons() = %v", got)
	}
	if _, err := ParseReason("refusal"); err == nil {
		t.Fatal("refusal is not a reason")
	}
	status := map[Reason]int{ReasonBilling: 402, ReasonServerError: 500, ReasonRateLimit: 429, ReasonOverloaded: 503, ReasonAuth: 401,
		ReasonAuthPermanent: 403, ReasonTimeout: 408, ReasonTLSCertificate: 502, ReasonContextOverflow: 413, ReasonFormat: 400,
		ReasonModelNotFound: 404, ReasonSessionExpired: 410}
	for _, r := range Reasons() {
		if r.Status() != status[r] {
			t.Errorf("%s.Status() = %d, want %d", r, r.Status(), status[r])
		}
	}
	for _, d := range Dispositions() {
		if p, err := ParseDisposition(string(d)); err != nil || p != d {
			t.Errorf("ParseDisposition(%q)", d)
		}
	}
}

func TestProviderError_JSONShapes(t *testing.T) {
	var e ProviderError
	in := `{"id":7,"status":"429","code":1305,"message":{"m":1},"body":{"error":{"message":"x"}},
		"headers":{"Retry-After":["1","2"],"X-N":5},"cause":"inner text","name":"AbortError","received_at":"2026-01-02T03:04:05Z","extra":true}`
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != "7" || e.Status != 429 || e.Code != "1305" || e.Message != `{"m":1}` || e.Body != `{"error":{"message":"x"}}` ||
		e.Header("retry-after") != "1, 2" || e.Header("x-n") != "5" || e.Cause == nil || e.Cause.Message != "inner text" ||
		e.Name != "AbortError" || e.ReceivedAt.IsZero() {
		t.Fatalf("decoded %+v", e)
	}
	if err := json.Unmarshal([]byte(`{"status":"RESOURCE_EXHAUSTED"}`), &e); err != nil || e.Status != 0 || Classify(&e).Reason != ReasonRateLimit {
		t.Fatalf("non-numeric status: %+v %v", e, err)
	}
	const statusWant = `status: want a number or a string (an HTTP status, or a status name such as "RESOURCE_EXHAUSTED", read as a code), got true`
	if err := json.Unmarshal([]byte(`{"status":true}`), &e); err == nil || err.Error() != statusWant {
		t.Errorf("status true: %v, want %s", err, statusWant)
	}
	for _, bad := range []string{`{"status":true}`, `{"status":42.5}`, `{"status":-1}`, `{"status":"-1"}`, `{"status":"1000"}`, `{"status":"9007199254740993"}`, `{"provider":{"a":1}}`, `{"cause":5}`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestProviderError_IsAnError(t *testing.T) {
	e := &ProviderError{Name: "AbortError", Status: 499, Message: "stop", Cause: &ProviderError{Message: "inner"}}
	if e.Error() != "AbortError: 499 stop" {
		t.Fatalf("Error() = %q", e.Error())
	}
	if e.Unwrap().Error() != "inner" {
		t.Fatal("Unwrap")
	}
}

func TestEmbedded_LenientShapes(t *testing.T) {
	cases := []struct {
		in   string
		path string
		val  string
	}{
		{`Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, "error.type", "invalid_request_error"},
		{`Error code: 400 - {'error': {'message': "It's bad", 'type': 'x_error', 'param': None}}`, "error.message", "It's bad"},
		{`APIError { type: 'server_error', code: 'server_error' }`, "code", "server_error"},
		{`{'headers': {':exception-type': 'throttlingException'}, 'body': b'{"message":"slow"}'}`, "body.message", "slow"},
		{`{"error":{"message":"{\n \"error\": {\"status\": \"RESOURCE_EXHAUSTED\"}}"}}`, "error.message.error.status", "RESOURCE_EXHAUSTED"},
		{`{"error":{"message":"cut here`, "", ""},
	}
	for _, c := range cases {
		fs := scanEmbedded(c.in)
		if c.path == "" {
			continue
		}
		found := false
		for _, f := range fs {
			if f.path == c.path && f.val == c.val {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s=%q in %+v", c.in, c.path, c.val, fs)
		}
	}
	// Depth is bounded.
	deep := strings.Repeat(`{"a":`, 100) + `"x"` + strings.Repeat("}", 100)
	deepStr := `{"message":"x"}`
	for i := 0; i < 14; i++ { // each level doubles the escaping
		b, _ := json.Marshal(map[string]string{"message": deepStr})
		deepStr = string(b)
	}
	_ = scanEmbedded(deep)
	if fs := scanEmbedded(deepStr); len(fs) > maxEmbedFields {
		t.Fatalf("fields %d", len(fs))
	}
}

func TestRedact_IsRedactString(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Q7w", 20)
	if got := Redact("key " + key); got != "key [REDACTED:api_key]" {
		t.Fatalf("Redact = %q", got)
	}
}
