package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fledger/fledger/internal/redact"
)

// ProviderError is one failed provider call as the gateway saw it: the input
// of [Classify]. Every field is optional. JSON field names are the ones
// `fledger classify` reads.
//
// JSON shapes accepted beyond the plain ones:
//   - status: a number (429) or a numeric string ("429"). A non-numeric string
//     ("RESOURCE_EXHAUSTED", gRPC style) is treated as a code (reference §2.7).
//   - code: a string or a number (Z.ai 1305, Cloudflare 4006).
//   - message: a string; any other JSON value is kept as its JSON text.
//   - body: a string, or any JSON value (kept as its JSON text, searched as
//     JSON).
//   - headers: an object whose values are strings, numbers or arrays of
//     strings (joined with ", ").
//   - cause: a nested error object, or a string (taken as its message).
//     At most [MaxDecodedCauses] nested causes are decoded; deeper ones are
//     skipped without being parsed and CauseTruncated is set on the outermost
//     error (see decode.go).
type ProviderError struct {
	// ID is the caller's identifier for the input line. Classify ignores it;
	// `fledger classify` echoes it.
	ID string `json:"id,omitempty"`
	// Provider is the provider id ("openai", "openrouter", "xai", …). It
	// scopes provider rules (reference §2.6); anything after the first space
	// or "(" is ignored for that purpose.
	Provider string `json:"provider,omitempty"`
	// Model is the model id; kept for the caller, not used by rules.
	Model string `json:"model,omitempty"`
	// Status is the HTTP status the provider returned, 0 when none.
	Status int `json:"status,omitempty"`
	// Code is the structured error code (OpenAI "insufficient_quota", gRPC
	// "RESOURCE_EXHAUSTED", Node "ECONNRESET", Bedrock exception names).
	Code string `json:"code,omitempty"`
	// Type is the API error type (Anthropic/OpenAI "invalid_request_error",
	// "overloaded_error", …).
	Type string `json:"type,omitempty"`
	// Message is the error message, often an SDK message that quotes the body.
	Message string `json:"message,omitempty"`
	// Body is the raw response body (JSON or text), when kept separately.
	Body string `json:"body,omitempty"`
	// Headers are the response headers. Use [ProviderError.Header] for a
	// case-insensitive lookup.
	Headers map[string]string `json:"headers,omitempty"`
	// Cause is the wrapped error, outermost first. Classify walks at most 25
	// levels and stops at a repeated pointer.
	Cause *ProviderError `json:"cause,omitempty"`
	// Name is the JavaScript-style error name: "AbortError", "TimeoutError",
	// or a local coordination error such as "GatewayDrainingError".
	Name string `json:"name,omitempty"`
	// ReceivedAt is when the response arrived. It resolves an HTTP-date
	// Retry-After when the caller passes no decision time (see [ClassifyAt]).
	ReceivedAt time.Time `json:"received_at,omitzero"`
	// CauseTruncated is set by UnmarshalJSON on the outermost error when the
	// JSON nested more than [MaxDecodedCauses] causes: the deeper ones were
	// dropped, unread. Classify reports it in Evidence.CauseTruncated.
	CauseTruncated bool `json:"cause_truncated,omitempty"`

	// statusCode holds a non-numeric JSON status ("RESOURCE_EXHAUSTED").
	statusCode string
	// ignored are the keys UnmarshalJSON ignored (outermost error only).
	ignored []string
}

// IgnoredKeys are the keys of the JSON object the error was decoded from
// that are not its fields, and so were ignored, with their path
// ("stauts", "cause.mesage"): at most [maxIgnoredKeys], in input order.
// A caller may warn about them: a misspelt status is no status.
func (e *ProviderError) IgnoredKeys() []string { return e.ignored }

// Header returns the value of the response header name, matched without
// regard to case, or "" when absent.
func (e *ProviderError) Header(name string) string {
	if e == nil || len(e.Headers) == 0 {
		return ""
	}
	if v, ok := e.Headers[name]; ok {
		return v
	}
	for k, v := range e.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// Error makes *ProviderError an error, so gateways can wrap it with %w and
// [FromError] can find it again. The text is "[name: ]<status> <message>".
func (e *ProviderError) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	if e.Name != "" {
		b.WriteString(e.Name)
		b.WriteString(": ")
	}
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteByte(' ')
	}
	switch {
	case e.Message != "":
		b.WriteString(e.Message)
	case e.Code != "":
		b.WriteString(e.Code)
	case e.Body != "":
		b.WriteString(e.Body)
	}
	return strings.TrimSpace(b.String())
}

// Unwrap returns the cause, so errors.Is/As see through a ProviderError.
func (e *ProviderError) Unwrap() error {
	if e == nil || e.Cause == nil {
		return nil
	}
	return e.Cause
}

func (e *ProviderError) setStatus(field string, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		s = strings.TrimSpace(s)
		if n, err := strconv.Atoi(s); err == nil {
			// The range of a numeric status (below): the status is
			// stored (AttemptFailed.status), and a number beyond 2^53
			// would not read back in JavaScript.
			if n < 0 || n > 999 {
				return fmt.Errorf("%s: %s is not an HTTP status", field, redact.Preview(string(raw), 40))
			}
			e.Status = n
		} else if s != "" {
			e.statusCode = s
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("%s: want a number or a string (an HTTP status, or a status name such as \"RESOURCE_EXHAUSTED\", read as a code), got %s", field, redact.Preview(string(raw), 40))
	}
	if f != float64(int(f)) || f < 0 || f > 999 {
		return fmt.Errorf("%s: %s is not an HTTP status", field, redact.Preview(string(raw), 40))
	}
	e.Status = int(f)
	return nil
}

// scalarText reads a string or number field; other shapes are an error.
func scalarText(field string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		return s, nil
	case '{', '[':
		return "", fmt.Errorf("%s: want a string, got %s", field, redact.Preview(string(raw), 40))
	}
	return string(raw), nil // number or boolean, kept as written
}

// anyText reads a string as itself and any other JSON value as its text.
func anyText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

func headerText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var vs []json.RawMessage
		if json.Unmarshal(raw, &vs) == nil {
			parts := make([]string, 0, len(vs))
			for _, v := range vs {
				parts = append(parts, anyText(v))
			}
			return strings.Join(parts, ", ")
		}
	}
	return anyText(raw)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
