package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fledger/fledger/internal/testutil"
)

// Fake credentials are assembled at run time so no secret-shaped literal is
// committed (secret scanners would flag it, rightly).
func fake(prefix string, n int) string {
	const alphabet = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xYz"
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[(i*7+3)%len(alphabet)])
	}
	return b.String()
}

// secretShapes are the detectors the tests use: none may match after String.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`),
	regexp.MustCompile(`\bxai-[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bgsk_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.`),
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{12,}`),
	regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`),
	regexp.MustCompile(`\borg-[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bproj_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bya29\.[0-9A-Za-z_\-]{16,}`),
	regexp.MustCompile(`\bsess-[A-Za-z0-9]{20,}`),
}

func assertClean(t *testing.T, name, out string) {
	t.Helper()
	for _, re := range secretShapes {
		if m := re.FindString(out); m != "" {
			t.Errorf("%s: secret-shaped text survived: %q in %q", name, m, out)
		}
	}
}

func TestString_RedactsEveryKind(t *testing.T) {
	jwt := "eyJhbGciOiJSUzI1NiJ9." + fake("eyJzdWIiOi", 40) + "." + fake("", 43)
	cases := []struct {
		name, in, want string
	}{
		{"openai key", "Incorrect API key provided: " + fake("sk-", 48) + ". You can find", "Incorrect API key provided: [REDACTED:api_key]. You can find"},
		{"openai project key", "key " + fake("sk-proj-", 60) + " rejected", "key [REDACTED:api_key] rejected"},
		{"anthropic key", "x-api-key " + fake("sk-ant-api03-", 80), "x-api-key [REDACTED:api_key]"},
		{"openrouter key", "using " + fake("sk-or-v1-", 64), "using [REDACTED:api_key]"},
		{"masked openai echo", "Incorrect API key provided: sk-abc1************************wxyz.", "Incorrect API key provided: [REDACTED:api_key]."},
		{"google key", "url: https://generativelanguage.googleapis.com/v1beta/models/x?alt=sse&key=" + fake("AIza", 35), "url: https://generativelanguage.googleapis.com/v1beta/models/x?alt=sse&key=[REDACTED:api_key]"},
		{"google key bare", "API key " + fake("AIza", 35) + " not valid", "API key [REDACTED:api_key] not valid"},
		{"xai key", "token " + fake("xai-", 70) + " expired", "token [REDACTED:api_key] expired"},
		{"groq key", fake("gsk_", 52) + " is invalid", "[REDACTED:api_key] is invalid"},
		{"bearer", "Authorization: Bearer " + fake("", 40), "Authorization: Bearer [REDACTED:bearer]"},
		{"jwt", "access_token=" + jwt + "&x=1", "access_token=[REDACTED:jwt]&x=1"},
		{"email", "profile openai:alice.smith+work@example.com failed", "profile openai:[REDACTED:email] failed"},
		{"openai org", "in organization " + fake("org-", 24) + " on tokens", "in organization [REDACTED:org_id] on tokens"},
		{"groq org", "in organization `" + fake("org_", 26) + "` service tier", "in organization `[REDACTED:org_id]` service tier"},
		{"openai project", "project " + fake("proj_", 24) + " over quota", "project [REDACTED:project_id] over quota"},
		{"anthropic org uuid", "(org: 1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901, model: x)", "(org: [REDACTED:org_id], model: x)"},
		{"gcp project path", "denied on resource '//aiplatform.googleapis.com/projects/my-proj-123/locations/us'", "denied on resource '//aiplatform.googleapis.com/projects/[REDACTED:project_id]/locations/us'"},
		{"json secret", `{"password":"hunter2hunter2x9","user":"u"}`, `{"password":"[REDACTED:secret]","user":"u"}`},
		{"api_key json", `{"api_key": "` + fake("", 32) + `"}`, `{"api_key": "[REDACTED:api_key]"}`},
		// A fresh-user breaker's shapes, all stored verbatim before.
		{"google oauth access token", "token " + fake("ya29.", 40) + " expired", "token [REDACTED:secret] expired"},
		{"google oauth refresh token", "refresh token " + fake("1//0g", 30) + " revoked", "refresh token [REDACTED:secret] revoked"},
		{"openai session key", "OAuth token has expired: " + fake("sess-", 36), "OAuth token has expired: [REDACTED:session]"},
		{"bearer token, spaced", "Invalid bearer token " + fake("", 36), "Invalid bearer token [REDACTED:secret]"},
		{"access token, spaced", "Your access token " + fake("", 36) + " is invalid", "Your access token [REDACTED:secret] is invalid"},
		{"x-api-key header", "x-api-key header " + fake("", 36) + " rejected", "x-api-key header [REDACTED:api_key] rejected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := String(c.in)
			if got != c.want {
				t.Fatalf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			assertClean(t, c.name, got)
			if again := String(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestString_KeepsOrdinaryProse(t *testing.T) {
	for _, s := range []string{
		"Rate limit reached for gpt-4.1-mini in organization org_test on requests per min.",
		"invalid api key",
		"API key not valid. Please pass a valid API key.",
		"Incorrect API key provided: sk-<REDACTED>. You can find your API key at https://platform.openai.com/account/api-keys.",
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
		"Missing bearer token",
		"token: undefined",
		"The input token count (134123) exceeds the maximum number of tokens allowed (131072).",
		"Please retry in 3.564818218s.",
		"max_tokens: 4096",
		"The access token expired",
		"token limit exceeded",
		"Please check your API key header and try again",
		"Rate limit reached for token bucket gpt4-tier2-abc",
		"Failed to refresh access token https://oauth2.googleapis.com/token: invalid_grant",
		"could not load token /home/runner/.config/gcloud/application_default_credentials.json",
		"Cannot read token kimi-k2-0905-preview-turbo-128k",
		"image data iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+1//8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
		"This model's maximum context length is 8192 tokens. However, you requested 10000 tokens",
	} {
		if got := String(s); got != s {
			t.Errorf("String changed ordinary text:\n in %q\nout %q", s, got)
		}
	}
}

func TestPreview_RedactsThenTruncatesOnRuneBoundary(t *testing.T) {
	key := fake("sk-ant-api03-", 80)
	got := Preview("余额不足 "+key+" tail", 8)
	if got != "余额不足 [RE…" {
		t.Fatalf("Preview = %q", got)
	}
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8: %q", got)
	}
	if Preview("short", 10) != "short" {
		t.Fatal("short text must be unchanged")
	}
	if Preview("anything", 0) != "" {
		t.Fatal("max 0 must give empty")
	}
}

func TestPreview_BoundedOnHugeInput(t *testing.T) {
	big := strings.Repeat("x", 10<<20) + " " + fake("sk-", 40)
	got := Preview(big, 200)
	if utf8.RuneCountInString(got) != 201 { // 200 runes + "…"
		t.Fatalf("len = %d", utf8.RuneCountInString(got))
	}
	// A key straddling the window must not leak a fragment.
	s := strings.Repeat("a ", 600) + fake("sk-proj-", 100)
	assertClean(t, "straddle", Preview(s, 1000))
}

// TestString_VectorsLeaveNoSecretShapedText runs every provider error in the
// shared vectors (and our own fixtures) through String.
func TestString_VectorsLeaveNoSecretShapedText(t *testing.T) {
	root := testutil.Root(t)
	files := []string{filepath.Join(root, "..", "shared", "vectors", "classify.jsonl")}
	if _, err := os.Stat(files[0]); err != nil {
		files[0] = filepath.Join(root, "fixtures", "vectors", "classify.jsonl")
	}
	own, _ := filepath.Glob(filepath.Join(root, "fixtures", "classify", "*.jsonl"))
	files = append(files, own...)
	n := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var v map[string]any
			if json.Unmarshal(sc.Bytes(), &v) != nil {
				continue
			}
			var walk func(x any)
			walk = func(x any) {
				switch x := x.(type) {
				case string:
					n++
					assertClean(t, filepath.Base(f)+" "+toString(v["id"]), String(x))
				case map[string]any:
					for k, y := range x {
						if k != "expect" && k != "source" {
							walk(y)
						}
					}
				case []any:
					for _, y := range x {
						walk(y)
					}
				}
			}
			walk(v)
		}
		fh.Close()
	}
	if n == 0 {
		t.Fatal("no vector text found")
	}
	t.Logf("checked %d strings", n)
}

func toString(x any) string { s, _ := x.(string); return s }

func BenchmarkString(b *testing.B) {
	s := `openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key provided: ` + fake("sk-", 48) + `. You can find your API key at https://platform.openai.com/account/api-keys.', 'type': 'invalid_request_error', 'param': None, 'code': 'invalid_api_key'}}`
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

// FuzzString: String never panics, is idempotent, and Preview stays within
// its bound.
//
//	go test ./internal/redact/ -run '^$' -fuzz FuzzString -fuzztime 60s
func FuzzString(f *testing.F) {
	f.Add("Incorrect API key provided: " + fake("sk-", 48))
	f.Add("Authorization: Bearer " + fake("", 40) + " user alice@example.com org-" + fake("", 24))
	f.Add("https://x/v1?key=" + fake("AIza", 35) + "&token=abc123def456")
	f.Add(`{"password":"hunter2hunter2x9","project_id":"p-123456","organization":"acme-42"}`)
	f.Fuzz(func(t *testing.T, s string) {
		once := String(s)
		if twice := String(once); twice != once {
			t.Fatalf("not idempotent:\n%q\n%q\n%q", s, once, twice)
		}
		if p := Preview(s, 50); utf8.RuneCountInString(p) > 51 {
			t.Fatalf("preview too long: %d", utf8.RuneCountInString(p))
		}
	})
}

// TestString_LinearOnRepeatedKeys: a value that runs across many following
// key names is not rescanned for each of them (this once took seconds).
func TestString_LinearOnRepeatedKeys(t *testing.T) {
	for _, s := range []string{strings.Repeat("token=", 20000), strings.Repeat("bearer ", 20000), strings.Repeat("api key ", 20000), strings.Repeat("a@", 50000) + "b.co"} {
		start := time.Now()
		String(s)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q…: %v", s[:12], d)
		}
	}
}
