package redact

import (
	"strings"
	"testing"
	"time"
)

// Each secret below is assembled at run time (see fake) and must not
// survive String in any of the four settings: a message, a JSON body, a
// header-like line and a URL.
type secretCase struct {
	name   string
	secret string   // must not appear in the output
	leaks  []string // other fragments that must not appear either
	msg    string   // in a message
	json   string   // in a JSON body
	header string   // in a header-like line
	url    string   // in a URL
	marker Kind     // expected marker (in every setting)
}

func secretCases() []secretCase {
	basic := "dXNlcjpwYXNzd29yZA=="
	awsSecret := fake("wJalr", 35)[:40]
	awsID := "AKIA" + strings.ToUpper(fake("", 16))
	sess := fake("s3ss", 28)
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + fake("", 60) + "\n" + fake("", 64) + "\n-----END RSA PRIVATE KEY-----"
	generic := fake("Zq9", 20)
	return []secretCase{
		{name: "basic auth", secret: basic, marker: KindBasicAuth,
			msg:    "proxy rejected Basic " + basic + " for upstream",
			json:   `{"headers":{"Authorization":"Basic ` + basic + `"}}`,
			header: "Authorization: Basic " + basic,
			url:    "https://api.example.com/v1?auth_header=Basic%20x&q=1 Basic " + basic},
		{name: "authorization digest", secret: "6629fae49393a05397450978507c4ef1", leaks: []string{`username="bob"`}, marker: KindAuthHeader,
			msg:    `upstream 401; sent Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"`,
			json:   `{"Proxy-Authorization": "Digest username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\""}`,
			header: "Proxy-Authorization: Digest username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\"\r\nHost: x",
			url:    `GET https://h.example.com/v1 Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"`},
		{name: "authorization bare token", secret: generic, marker: KindAuthHeader,
			msg:    "header authorization: " + generic + " was rejected",
			json:   `{"authorization":"` + generic + `"}`,
			header: "Authorization: " + generic,
			url:    "curl https://h.example.com -H 'Authorization: " + generic + "'"},
		{name: "aws secret access key", secret: awsSecret, marker: KindAWSSecret,
			msg:    "config aws_secret_access_key=" + awsSecret + " was refused",
			json:   `{"AccessKeyId":"x","SecretAccessKey":"` + awsSecret + `"}`,
			header: "AWS_SECRET_ACCESS_KEY: " + awsSecret,
			url:    "https://bedrock.example.com/?aws_secret_access_key=" + awsSecret},
		{name: "aws access key id", secret: awsID, marker: KindAPIKey,
			msg:    "The security token for " + awsID + " is invalid",
			json:   `{"aws_access_key_id": "` + awsID + `"}`,
			header: "X-Amz-Credential: " + awsID + "/20260101/us-east-1/bedrock/aws4_request",
			url:    "https://s3.amazonaws.com/b/o?X-Amz-Credential=" + awsID + "%2F20260101"},
		{name: "session id", secret: sess, marker: KindSession,
			msg:    "login failed for sessionid=" + sess + "; retry",
			json:   `{"session_id": "` + sess + `"}`,
			header: "X-Session: sid=" + sess,
			url:    "https://chat.example.com/backend?sid=" + sess + "&x=1"},
		{name: "cookie header", secret: sess, marker: KindCookie,
			msg:    "request had Cookie: __Secure-next-auth.session-token=" + sess + "; cf_clearance=abc",
			json:   `{"Cookie": "sessionid=` + sess + `; csrftoken=abc"}`,
			header: "Set-Cookie: sessionid=" + sess + "; Path=/; HttpOnly",
			url:    "GET https://chat.example.com/ Cookie: sid=" + sess},
		{name: "pem private key", secret: "MIIEow", leaks: []string{fake("", 64)}, marker: KindPrivateKey,
			msg:    "bad credentials file: " + pem + " (service account)",
			json:   `{"private_key": "` + strings.ReplaceAll(pem, "\n", `\n`) + `","client_email":"x"}`,
			header: "X-Key: " + strings.ReplaceAll(pem, "\n", " "),
			url:    "https://h.example.com/upload?key=none " + pem},
		{name: "url userinfo", secret: "p4ssw0rd", leaks: []string{"user:", "admin"}, marker: KindUserinfo,
			msg:    "could not connect to https://admin:p4ssw0rd@proxy.example.com:8080/v1",
			json:   `{"proxy":"http://admin:p4ssw0rd@proxy.example.com"}`,
			header: "Location: https://admin:p4ssw0rd@proxy.example.com/",
			url:    "https://user:p4ssw0rd@host.example.com/path?x=1"},
		{name: "generic query and json keys", secret: "Hx7kQ2", marker: KindSecret,
			msg:    "refresh failed: refresh_token=Hx7kQ2",
			json:   `{"token": "Hx7kQ2"}`,
			header: "client_secret: Hx7kQ2abcdefgh",
			url:    "https://h.example.com/oauth?client_secret=Hx7kQ2&grant=x"},
		{name: "json password and secret", secret: "letmein", marker: KindSecret,
			msg:    `db said {"password": "letmein"}`,
			json:   `{"user":"u","secret":"letmein"}`,
			header: `X-Creds: {'password': 'letmein'}`,
			url:    "postgres://h.example.com/db?password=letmein"},
		{name: "api key short", secret: "abc123", marker: KindAPIKey,
			msg:    `config {"api_key": "abc123"} rejected`,
			json:   `{"x-api-key":"abc123"}`,
			header: `'x-api-key': 'abc123'`,
			url:    "https://h.example.com/v1?apikey=abc123"},
		{name: "escaped json in a string", secret: "hunter22", marker: KindSecret,
			msg:    `400 {"detail":"{\"password\": \"hunter22\"}"}`,
			json:   `{"body":"{\"token\":\"hunter22\"}"}`,
			header: `X-Debug: {\"secret\":\"hunter22\"}`,
			url:    "https://h.example.com/?token=hunter22"},
	}
}

func TestString_NewSecretShapes(t *testing.T) {
	for _, c := range secretCases() {
		for _, in := range []struct{ where, text string }{{"message", c.msg}, {"json", c.json}, {"header", c.header}, {"url", c.url}} {
			got := String(in.text)
			for _, frag := range append([]string{c.secret}, c.leaks...) {
				if strings.Contains(got, frag) {
					t.Errorf("%s in %s: %q survived:\n in %q\nout %q", c.name, in.where, frag, in.text, got)
				}
			}
			if !strings.Contains(got, "[REDACTED:") {
				t.Errorf("%s in %s: no marker in %q", c.name, in.where, got)
			}
			if again := String(got); again != got {
				t.Errorf("%s in %s: not idempotent:\n%q\n%q", c.name, in.where, got, again)
			}
			if p := Preview(in.text, 300); strings.Contains(p, c.secret) {
				t.Errorf("%s in %s: Preview leaked: %q", c.name, in.where, p)
			}
		}
		// The kind of the canonical (message) setting.
		if got := String(c.msg); !strings.Contains(got, Marker(c.marker)) {
			t.Errorf("%s: want %s in %q", c.name, Marker(c.marker), got)
		}
	}
}

func TestString_NewShapesExact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic_auth]"},
		{"Authorization: Bearer " + fake("", 40), "Authorization: Bearer [REDACTED:bearer]"},
		{"Proxy-Authorization: Negotiate YIIC" + fake("", 30), "Proxy-Authorization: Negotiate [REDACTED:auth_header]"},
		{"https://user:p4ssw0rd@host.example.com/x", "https://[REDACTED:userinfo]@host.example.com/x"},
		{"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=[REDACTED:aws_secret]"},
		{"id AKIAIOSFODNN7EXAMPLE denied", "id [REDACTED:api_key] denied"},
		{"a -----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY----- b", "a [REDACTED:private_key] b"},
		{"cut -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI", "cut [REDACTED:private_key]"},
		{"Cookie: a=1; sessionid=xyz\nHost: h", "Cookie: [REDACTED:cookie]\nHost: h"},
		{`{"password": "hunter2", "user": "u"}`, `{"password": "[REDACTED:secret]", "user": "u"}`},
		{`{"token": "abc"}`, `{"token": "[REDACTED:secret]"}`},
		{"x?client_secret=s3cr3t&a=1", "x?client_secret=[REDACTED:secret]&a=1"},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestString_NewShapesKeepProse(t *testing.T) {
	for _, s := range []string{
		"Authorization: required",
		"authorization: failed",
		"Missing Authorization header",
		"Basic authentication is not supported",
		"Basic Authentication failed",
		"Your session has expired: please log in again",
		"session: expired",
		"See https://platform.openai.com/docs/guides/error-codes for details",
		"Invalid 'max_tokens': integer below minimum value.",
		`{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 4096 > 2048"}}`,
		`{"error":{"message":"The model ` + "`gpt-x`" + ` does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		`{"token_type": "bearer", "expires_in": 3600}`,
		`{"password": null, "secret": ""}`,
		"The secret is invalid or expired",
	} {
		if got := String(s); got != s {
			t.Errorf("String changed ordinary text:\n in %q\nout %q", s, got)
		}
	}
}

// TestString_NewShapesLinear: each new scanner on a 1 MB adversarial input
// (its trigger repeated, never closed) finishes quickly.
func TestString_NewShapesLinear(t *testing.T) {
	const mb = 1 << 20
	rep := func(p string) string { return strings.Repeat(p, mb/len(p)+1)[:mb] }
	for _, s := range []string{
		rep("-----BEGIN PRIVATE KEY-----"),
		rep("-----BEGIN "),
		"-----BEGIN PRIVATE KEY-----" + rep("a") + rep("-----END "),
		rep("https://"),
		rep("://a@"),
		"https://" + rep("u:p@"),
		rep("Authorization: "),
		rep("authorization:\""),
		rep("Authorization: Digest a=1, "),
		rep("Cookie: "),
		rep("Set-Cookie: a"),
		rep("basic "),
		rep("Basic dXNlcjpwYXNzd29yZA== "),
		rep("aws_secret_access_key="),
		rep("aws_secret_access_key=\""),
		rep("SecretAccessKey"),
		rep("client_secret_password_credential"),
		rep("sessionid="),
		rep("sid=\""),
		rep(`{"password":"`),
		rep(`\"token\": \"`),
		rep("?client_secret=&"),
		rep("x_" + fake("", 10) + " "),
	} {
		start := time.Now()
		out := String(s)
		// Linear work is well under a second even on a loaded machine; the
		// quadratic shapes these guard against take minutes at 1 MB.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%q…: %v", s[:16], d)
		}
		if String(out) != out {
			t.Errorf("%q…: not idempotent", s[:16])
		}
	}
}

// A key after an escaped newline (JSON-quoted text: the two bytes `\n`),
// after an escaped quote (\u0022) or inside an identifier (key_…) is still
// a key; a vendor prefix inside an ordinary word is not.
func TestString_VendorPrefixAfterEscapes(t *testing.T) {
	key := "sk-ant-api03-ZZLEAKabcdefghijklmnopqrstuvwxyz0123456789"
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVlLWhlcmU"
	for _, in := range []string{
		`upstream failed\n` + key,
		`upstream failed\t` + key,
		`{\u0022k\u0022:\u0022` + key + `\u0022}`,
		`key_` + key,
		`failed\n` + jwt,
	} {
		out := String(in)
		if strings.Contains(out, "ZZLEAK") || strings.Contains(out, "c2lnbmF0dXJl") {
			t.Errorf("String(%q) = %q: secret survived", in, out)
		}
	}
	for _, in := range []string{"task-abcdefghijklmnopqrstuvwxyz0123456789", "disk-abcdefghijklmnopqrstuvwxyz0123456789"} {
		if out := String(in); out != in {
			t.Errorf("String(%q) = %q: ordinary word redacted", in, out)
		}
	}
}

// key=value passwords are replaced whatever their shape; prose is kept.
func TestString_PasswordEqualsAnyValue(t *testing.T) {
	cases := map[string]string{
		"login failed: password=swordfish":             "login failed: password=[REDACTED:secret]",
		"dsn host=db user=app password=hunter2 port=5": "dsn host=db user=app password=[REDACTED:secret] port=5",
		"client_secret=abc&x=1":                        "client_secret=[REDACTED:secret]&x=1",
		"the password is required":                     "the password is required",
	}
	for in, want := range cases {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if got := String(String(in)); got != String(in) {
			t.Errorf("not idempotent on %q: %q", in, got)
		}
	}
}

// Credentials behind percent-encoded separators are found too.
func TestString_URLEncodedCredentials(t *testing.T) {
	for _, in := range []string{
		"GET /v1?api_key%3Dabc123secretvalue9 failed",
		"proxy https%3A%2F%2Fuser%3Ap4ssw0rd%40host.example%2Fx refused",
		"form password%3Dswordfish%26user%3Dme",
	} {
		out := String(in)
		for _, secret := range []string{"abc123secretvalue9", "p4ssw0rd", "swordfish"} {
			if strings.Contains(out, secret) {
				t.Errorf("String(%q) = %q keeps %q", in, out, secret)
			}
		}
		if String(out) != out {
			t.Errorf("not idempotent: %q", out)
		}
	}
}
