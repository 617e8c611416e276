// Package redact removes secret-shaped text from provider error text before
// it leaves the process: API keys, bearer tokens, JWTs, e-mail addresses and
// organisation/project identifiers.
//
// Every replacement is a stable marker of the form [REDACTED:<kind>] (see the
// Kind constants), so redacted text stays greppable and String is idempotent:
// String(String(s)) == String(s).
//
// The rules are ordered data (see rules below): the most specific shapes
// (bearer tokens, JWTs, vendor key prefixes) run before the generic
// "key=value" and identifier rules, so a value is named by its most precise
// kind.
package redact

import (
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Kind names what a marker replaced. The marker text is "[REDACTED:" + kind + "]".
type Kind string

// The kinds of secret-shaped text String replaces.
const (
	// KindAPIKey is a provider API key: sk-…, sk-ant-…, sk-proj-…, AIza…,
	// xai-…, gsk_…, and long key-like values after "api key", "key=", …
	KindAPIKey Kind = "api_key"
	// KindBearer is the credential after "Bearer ".
	KindBearer Kind = "bearer"
	// KindJWT is a JSON Web Token (three base64url parts, header "eyJ…").
	KindJWT Kind = "jwt"
	// KindEmail is an e-mail address (OAuth profile ids carry them).
	KindEmail Kind = "email"
	// KindOrgID is an organisation id: OpenAI org-…, Groq org_…, or the value
	// after "organization:" / "org:".
	KindOrgID Kind = "org_id"
	// KindProjectID is a project id: OpenAI proj_…, or a GCP projects/<id>
	// path segment, or the value after "project:".
	KindProjectID Kind = "project_id"
	// KindSecret is any other credential value after a secret-looking key
	// (token=, secret=, password=, authorization:, access_token=, …).
	KindSecret Kind = "secret"
	// KindBasicAuth is the credential after "Basic " (HTTP basic auth,
	// base64 of user:password).
	KindBasicAuth Kind = "basic_auth"
	// KindAuthHeader is an Authorization / Proxy-Authorization header value
	// of any other scheme (Digest, AWS4-HMAC-SHA256, a bare token, …).
	KindAuthHeader Kind = "auth_header"
	// KindAWSSecret is an AWS secret access key or session token (the value
	// after aws_secret_access_key=, "SecretAccessKey":, aws_session_token=, …).
	KindAWSSecret Kind = "aws_secret"
	// KindCookie is a Cookie / Set-Cookie header value.
	KindCookie Kind = "cookie"
	// KindSession is a session id (sessionid=, session_id=, sid=, …).
	KindSession Kind = "session"
	// KindPrivateKey is a whole PEM private key block, BEGIN to END (or to
	// the end of the text when the END line is missing).
	KindPrivateKey Kind = "private_key"
	// KindUserinfo is the user[:password] part of a URL
	// (https://user:pass@host keeps its scheme and host).
	KindUserinfo Kind = "userinfo"
)

// Marker returns the replacement text for kind, e.g. "[REDACTED:api_key]".
func Marker(kind Kind) string { return "[REDACTED:" + string(kind) + "]" }

// rule replaces secret-shaped spans of a text. A rule finds its spans
// either with a case-sensitive regex that starts with a literal vendor prefix
// (fast in Go's matcher), or with a keyValue scanner for the
// case-insensitive "name: value" shapes (a regex there would be tried at
// every position). When group > 0 only that submatch is replaced. min is the
// shortest replaced span in bytes; keep, when set, vetoes a candidate value
// (for example a plain English word after "token:"), so ordinary prose is not
// mangled. hints are lower-case literals of which at least one must occur in
// the text for a regex rule to run at all.
//
// find, when set, is a hand-written linear scanner for shapes neither a
// regex nor keyValue expresses (PEM blocks, URL userinfo, header lines).
// A span found after a quote (JSON "password": "…") is a quoted span: with
// keyValue.anyQuoted it is replaced whatever its shape (see quotedValue).
type rule struct {
	kind  Kind
	hints []string
	re    *regexp.Regexp
	kv    *keyValue
	find  func(s, lower string) []span
	group int
	min   int
	keep  func(v string) bool
}

// span is a candidate replacement s[st:en]; quoted is set for a value that
// was opened by a quote after its key (anyQuoted rules only).
type span struct {
	st, en int
	quoted bool
}

// rules run in order; each sees the output of the previous ones.
var rules = []rule{
	// PEM private key blocks, redacted whole: first, so no other rule
	// replaces pieces of the base64 body.
	{kind: KindPrivateKey, find: pemSpans, min: 1},
	// URL userinfo (https://user:pass@host): before the e-mail rule, which
	// would otherwise take "pass@host" and leave the user name.
	{kind: KindUserinfo, find: userinfoSpans, min: 1},
	// "Authorization: Bearer <token>" and "bearer <token>" in SDK dumps and
	// proxy logs. The word "Bearer" is kept.
	{kind: KindBearer, kv: &keyValue{names: []string{"bearer"}, sep: sepSpace, value: isTokenByte, trailEq: true}, min: 12, keep: looksLikeToken},
	// "Basic <base64 user:password>" anywhere. The word "Basic" is kept.
	{kind: KindBasicAuth, kv: &keyValue{names: []string{"basic"}, sep: sepSpace, value: isBase64Byte, trailEq: true}, min: 8, keep: looksLikeBase64},
	// JWTs: OAuth access tokens (Codex, Claude OAuth), Vertex id tokens.
	{kind: KindJWT, hints: []string{"eyj"}, re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`), min: 17},
	// OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-api03-,
	// sk-ant-oat01-, sk-ant-admin01-), OpenRouter (sk-or-v1-), DeepSeek,
	// Moonshot and most OpenAI-compatible gateways. OpenAI's partially masked
	// echo "sk-abc1****…wxyz" is redacted as well.
	{kind: KindAPIKey, hints: []string{"sk-"}, re: regexp.MustCompile(`sk-[A-Za-z0-9_*\-]+`), min: 19},
	// Stripe-style live/test keys some gateways reuse.
	{kind: KindAPIKey, hints: []string{"k_live_", "k_test_"}, re: regexp.MustCompile(`[rs]k_(?:live|test)_[A-Za-z0-9]+`), min: 24},
	// Google AI Studio / Gemini API keys.
	{kind: KindAPIKey, hints: []string{"aiza"}, re: regexp.MustCompile(`AIza[0-9A-Za-z_\-]+`), min: 34},
	// Google OAuth 2.0 access tokens (Vertex AI, Gemini with OAuth) and
	// refresh tokens.
	{kind: KindSecret, hints: []string{"ya29."}, re: regexp.MustCompile(`ya29\.[0-9A-Za-z_\-]+`), min: 20},
	{kind: KindSecret, hints: []string{"1//"}, re: regexp.MustCompile(`(?:^|[^0-9A-Za-z+/=])(1//[0-9A-Za-z_\-]{20,})`), group: 1, min: 24},
	// OpenAI session keys (sess-…), sent where an API key goes.
	{kind: KindSession, hints: []string{"sess-"}, re: regexp.MustCompile(`\bsess-[A-Za-z0-9]{20,}`), min: 25},
	// xAI keys.
	{kind: KindAPIKey, hints: []string{"xai-"}, re: regexp.MustCompile(`xai-[A-Za-z0-9_\-]+`), min: 24},
	// Groq keys.
	{kind: KindAPIKey, hints: []string{"gsk_"}, re: regexp.MustCompile(`gsk_[A-Za-z0-9]+`), min: 24},
	// Other vendor prefixes seen in gateway configs: GitHub (Copilot tokens),
	// Hugging Face, Perplexity, Replicate, Slack, AWS access key ids.
	{kind: KindAPIKey, hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "pplx-", "r8_", "xox", "akia", "asia"},
		re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]+|github_pat_[A-Za-z0-9_]+|hf_[A-Za-z0-9]+|pplx-[A-Za-z0-9]+|r8_[A-Za-z0-9]+|xox[abposr]-[A-Za-z0-9\-]+|(?:AKIA|ASIA)[0-9A-Z]{16})\b`), min: 14},
	// "Authorization:" / "Proxy-Authorization:" header values of any scheme
	// (the scheme word is kept), and Cookie / Set-Cookie header values.
	{kind: KindAuthHeader, find: authHeaderSpans, min: 1},
	{kind: KindCookie, find: cookieHeaderSpans, min: 1},
	// AWS secret access keys and session tokens, and any other value after a
	// compound key naming a secret ("SecretAccessKey", "db_password", …).
	{kind: KindAWSSecret, find: secretKeySpans(true), min: 1},
	{kind: KindSecret, find: secretKeySpans(false), min: 1},
	// Query-string credentials: Gemini "?key=AIza…", signed URLs, OAuth.
	{kind: KindAPIKey, kv: &keyValue{names: []string{"key=", "api_key=", "apikey=", "api-key=", "x-api-key="}, query: true, value: isQueryByte}, min: 1, keep: notMarker},
	{kind: KindSecret, kv: &keyValue{names: []string{
		"access_token=", "refresh_token=", "id_token=", "token=", "auth=", "secret=", "client_secret=",
		"password=", "passwd=", "pwd=", "sig=", "signature=", "x-amz-signature=", "x-amz-credential=",
		"x-amz-security-token=",
	}, query: true, value: isQueryByte}, min: 1, keep: notMarker},
	{kind: KindSession, kv: &keyValue{names: []string{"sessionid=", "session_id=", "session=", "sid=", "phpsessid=", "jsessionid="}, query: true, value: isQueryByte}, min: 1, keep: notMarker},
	// "Incorrect API key provided: <value>", "api key: <value>", "apiKey=<value>".
	{kind: KindAPIKey, kv: &keyValue{names: []string{"api key", "api_key", "api-key", "apikey", "x-api-key", "x-goog-api-key", "subscription-key"}, provided: true, sep: sepOptional, value: isKeyByte, anyQuoted: true}, min: 16, keep: looksLikeToken},
	// Session ids: "sessionid=…", "session_id": "…", "sid=…".
	{kind: KindSession, kv: &keyValue{names: []string{
		"sessionid", "session_id", "session-id", "sessid", "phpsessid", "jsessionid", "sid", "session",
	}, sep: sepRequired, value: isSecretByte, anyQuoted: true}, min: 8, keep: looksLikeSessionID},
	// A password or secret written key=value with nothing between (form
	// bodies, DSNs, log lines): the value is replaced whatever its shape,
	// even a plain word ("password=swordfish"), which the token-shaped
	// rule below would keep.
	{kind: KindSecret, hints: []string{"password=", "passwd=", "pwd=", "secret="},
		re: regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|client_secret|secret)=([^\s&"',;)\]}]+)`), group: 1, min: 1, keep: notMarker},
	// Other credentials after a secret-looking key. A quoted value (JSON,
	// Python repr) is replaced whatever its shape.
	{kind: KindSecret, kv: &keyValue{names: []string{
		"access_token", "access-token", "accesstoken", "refresh_token", "refresh-token", "refreshtoken",
		"id_token", "id-token", "idtoken", "session_token", "session-token", "sessiontoken",
		"client_secret", "client-secret", "clientsecret", "secret_key", "secret-key", "secretkey",
		"secret", "password", "passwd", "pwd", "authorization", "token", "auth_token", "auth-token", "authtoken",
	}, sep: sepRequired, value: isSecretByte, anyQuoted: true}, min: 6, keep: looksLikeToken},
	{kind: KindSecret, kv: &keyValue{names: []string{"key"}, sep: sepRequired, value: isSecretByte}, min: 8, keep: looksLikeToken},
	// The same credentials written with a space ("Your access token <v> is
	// invalid", "Invalid bearer token <v>"): only a long token-shaped value
	// is replaced, so prose ("token limit", "access token expired") stays.
	{kind: KindSecret, kv: &keyValue{names: []string{
		"access token", "refresh token", "id token", "auth token", "api token", "session token", "oauth token", "token",
	}, provided: true, sep: sepOptional, value: isSecretByte}, min: 16, keep: spacedToken},
	// E-mail addresses (OAuth profile ids are "provider:<email>").
	{kind: KindEmail, hints: []string{"@"}, re: regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]+`), min: 6},
	// OpenAI organisation ids (org-<24>), Groq/others (org_<ulid>).
	{kind: KindOrgID, hints: []string{"org-", "org_"}, re: regexp.MustCompile(`\borg[-_][A-Za-z0-9]+\b`), min: 16},
	// OpenAI project ids (proj_<24>).
	{kind: KindProjectID, hints: []string{"proj-", "proj_"}, re: regexp.MustCompile(`\bproj[-_][A-Za-z0-9]+\b`), min: 17},
	// "(org: 1b2c…)", "organization_id=…": Anthropic quotes the org UUID.
	{kind: KindOrgID, kv: &keyValue{names: []string{"org", "organization", "organisation"}, idSuffix: true, sep: sepRequired, value: isIDByte}, min: 6, keep: hasDigitAndLetter},
	// "project: …", "project_id=…".
	{kind: KindProjectID, kv: &keyValue{names: []string{"project"}, idSuffix: true, sep: sepRequired, value: isIDByte}, min: 6, keep: hasDigitAndLetter},
	// GCP resource paths "projects/<id>/locations/…" (Vertex 403s).
	{kind: KindProjectID, hints: []string{"projects/"}, re: regexp.MustCompile(`\bprojects/([A-Za-z0-9][A-Za-z0-9_\-.]+)`), min: 4, group: 1, keep: notMarker},
}

// Separator shapes between a key and its value.
const (
	sepRequired = iota // ["']? \s* [:=] \s* ["']?
	sepOptional        // as sepRequired, the [:=] optional (whitespace alone will do)
	sepSpace           // at least one space
)

// keyValue finds values after names, case-insensitively, in linear time.
// A name matches at a word boundary (query names right after '?' or '&');
// idSuffix lets "[ _-]id" follow it, provided lets " provided", " header"
// or " value" follow it;
// the value is the longest run of value bytes (plus '=' padding with
// trailEq).
type keyValue struct {
	names    []string
	query    bool
	idSuffix bool
	provided bool
	sep      int
	value    func(c byte) bool
	trailEq  bool
	// anyQuoted: a value opened by a quote runs to its closing quote and
	// is replaced whatever its shape (quotedValue decides, not keep/min).
	anyQuoted bool
}

func (kv *keyValue) spans(s, lower string) []span {
	var out []span
	for _, name := range kv.names {
		for i := 0; i < len(lower); {
			k := strings.Index(lower[i:], name)
			if k < 0 {
				break
			}
			k += i
			i = k + 1
			if kv.query {
				if k == 0 || (s[k-1] != '?' && s[k-1] != '&') {
					continue
				}
			} else if k > 0 && isWordByte(lower[k-1]) {
				continue
			}
			j := k + len(name)
			if kv.idSuffix {
				r := lower[j:]
				switch {
				case strings.HasPrefix(r, "id"):
					j += 2
				case len(r) > 2 && (r[0] == ' ' || r[0] == '_' || r[0] == '-') && strings.HasPrefix(r[1:], "id"):
					j += 3
				}
			}
			if !kv.query && j < len(lower) && isWordByte(lower[j]) {
				continue
			}
			if kv.provided {
				// "API key provided: <v>", "x-api-key header <v>".
				for _, w := range []string{" provided", " header", " value"} {
					if strings.HasPrefix(lower[j:], w) && (j+len(w) == len(lower) || !isWordByte(lower[j+len(w)])) {
						j += len(w)
						break
					}
				}
			}
			switch {
			case kv.query:
				// the name ends in '=': the value follows at once
			case kv.sep == sepSpace:
				st := j
				j = skipSpaces(s, j)
				if j == st {
					continue
				}
			default: // sepRequired, sepOptional
				j = skipQuote(s, j)
				j = skipSpaces(s, j)
				if j < len(s) && (s[j] == ':' || s[j] == '=') {
					j++
				} else if kv.sep == sepRequired {
					continue
				}
				j = skipSpaces(s, j)
				q := j
				j = skipQuote(s, j)
				if kv.anyQuoted && j > q {
					if e, ok := closingQuote(s, j, s[q:j]); ok && e > j {
						out = append(out, span{j, e, true})
						i = e
						continue
					}
				}
			}
			e := j
			for e < len(s) && kv.value(s[e]) {
				e++
			}
			for kv.trailEq && e < len(s) && s[e] == '=' {
				e++
			}
			if e > j {
				out = append(out, span{st: j, en: e})
				i = e // values are not rescanned: linear in len(s) per name
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].st < out[b].st })
	return out
}

// closingQuote returns the end of a quoted value starting at i, opened by
// quote (`"`, `'` or an escaped `\"`): the offset of the closing quote. The
// value ends at a line break; an unclosed quote gives ok false.
func closingQuote(s string, i int, quote string) (int, bool) {
	for k := i; k < len(s); k++ {
		switch c := s[k]; c {
		case '\\':
			if quote == `\"` && k+1 < len(s) && s[k+1] == '"' {
				return k, true
			}
			k++ // an escaped character inside the value
		case '"', '\'':
			if quote == string(c) {
				return k, true
			}
		case '\n', '\r':
			return k, false
		}
	}
	return len(s), false
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipQuote skips one quote: `"`, `'`, or a JSON-escaped `\"` (a JSON
// document quoted inside a JSON string).
func skipQuote(s string, i int) int {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	} else if i+1 < len(s) && s[i] == '\\' && s[i+1] == '"' {
		i += 2
	}
	return i
}

// prefixBoundary reports whether a vendor-prefix match at start begins a
// token: at the start, after a non-word byte, after an underscore (an
// identifier such as key_sk-ant-… still carries the key), or after an
// escape sequence such as \n, \t or \u0022 — JSON-quoted text turns a
// newline before a key into the two bytes `\n`, and the "n" must not hide
// the key behind it.
func prefixBoundary(s string, start int) bool {
	if start == 0 || !isWordByte(s[start-1]) || s[start-1] == '_' {
		return true
	}
	if start >= 2 && s[start-2] == '\\' && strings.IndexByte("nrtbfv0", s[start-1]) >= 0 {
		return true
	}
	if start >= 6 && s[start-6] == '\\' && s[start-5] == 'u' {
		for _, c := range []byte(s[start-4 : start]) {
			if !isHexByte(c) {
				return false
			}
		}
		return true
	}
	return false
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isTokenByte(c byte) bool {
	return isWordByte(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/'
}

func isKeyByte(c byte) bool { return isWordByte(c) || c == '-' || c == '.' || c == '*' }

func isIDByte(c byte) bool { return isWordByte(c) || c == '-' }

func isQueryByte(c byte) bool {
	return c > ' ' && c != '&' && c != '"' && c != '\'' && c != '#' && c != '<' && c != '>' && c < 0x7f
}

func isSecretByte(c byte) bool {
	return c > ' ' && c != '"' && c != '\'' && c != ',' && c != ';' && c != '&' && c != '}' && c != '<' && c != '>' && c != ']'
}

// String returns s with every secret-shaped substring replaced by its marker.
// It is safe on any input (invalid UTF-8 is passed through) and idempotent.
func String(s string) string {
	if strings.IndexByte(s, '%') >= 0 {
		// URL-encoded separators hide a credential from every rule
		// ("api_key%3Dabc…", "https%3A%2F%2Fuser%3Apass%40host"): decode
		// them first. A preview then shows the decoded separator, which
		// is what a reader wants anyway; decoding is idempotent.
		s = separatorDecoder.Replace(s)
	}
	if !mayHoldSecret(s) && !mayHoldKeyedSecret(asciiLower(s)) {
		return s
	}
	lower := asciiLower(s)
	for i := range rules {
		if out, changed := rules[i].apply(s, lower); changed {
			s, lower = out, asciiLower(out)
		}
	}
	return s
}

// separatorDecoder decodes the percent-encoded separators credentials
// hide behind: = : / @ & ? and the double quote, in either hex case.
var separatorDecoder = strings.NewReplacer(
	"%3D", "=", "%3d", "=", "%3A", ":", "%3a", ":", "%2F", "/", "%2f", "/",
	"%40", "@", "%26", "&", "%3F", "?", "%3f", "?", "%22", `"`,
)

func (r *rule) hinted(lower string) bool {
	for _, h := range r.hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return len(r.hints) == 0
}

// spans returns the candidate spans of r in s (lower is s lower-cased, the
// same length as s).
func (r *rule) spans(s, lower string) []span {
	if r.find != nil {
		return r.find(s, lower)
	}
	if r.kv != nil {
		return r.kv.spans(s, lower)
	}
	if !r.hinted(lower) {
		return nil
	}
	var out []span
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		st, en := m[0], m[1]
		if r.group > 0 {
			st, en = m[2*r.group], m[2*r.group+1]
			if st < 0 {
				continue
			}
		}
		out = append(out, span{st: st, en: en})
	}
	return out
}

func (r *rule) apply(s, lower string) (string, bool) {
	sp := r.spans(s, lower)
	if sp == nil {
		return s, false
	}
	var b strings.Builder
	last := 0
	for _, x := range sp {
		start, end := x.st, x.en
		if start < last {
			continue
		}
		if x.quoted {
			if !quotedValue(s[start:end]) {
				continue
			}
		} else if end-start < r.min || r.keep != nil && !r.keep(s[start:end]) {
			continue
		}
		if r.re != nil && !prefixBoundary(s, start) {
			continue // a prefix inside a longer word ("task-…", "disk-…"): the regexes carry no \b so Go can scan for their literal prefix
		}
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(Marker(r.kind))
		last = end
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// Preview redacts s and cuts it to at most max runes, appending "…" when it
// was cut. Only a bounded window of s is examined (about 4×max bytes plus
// 1 KiB, backed up to the last separator so no secret is split), so a 10 MB
// message costs no more than a short one. max <= 0 yields "".
func Preview(s string, max int) string {
	if max <= 0 || s == "" {
		return ""
	}
	window := 4*max + 1024
	cut := false
	if len(s) > window {
		w := s[:window]
		if i := strings.LastIndexAny(w, " \t\r\n\"',;"); i > 0 {
			w = w[:i]
		}
		s, cut = w, true
	}
	s = String(strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > max {
		n := 0
		for i := range s {
			if n == max {
				s, cut = s[:i], true
				break
			}
			n++
		}
	}
	if cut {
		s += "…"
	}
	return s
}

// mayHoldSecret is a one-pass filter: every rule needs an '@' (e-mail), a
// run of 12 or more token characters, or a run of 6 or more that holds a
// digit (the shortest ids the key=value rules redact). Ordinary phrases
// ("rate limit", "invalid api key") fail it and skip all regexes.
func mayHoldSecret(s string) bool {
	run, digit := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '@':
			return true
		case c >= '0' && c <= '9':
			digit = true
			run++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-', c == '.', c == '*', c == '+', c == '/', c == '=', c == '~':
			run++
		default:
			run, digit = 0, false
			continue
		}
		if run >= 12 || run >= 6 && digit {
			return true
		}
	}
	return false
}

// looksLikeToken rejects ordinary words ("undefined", "provided", "expired")
// so only credential-shaped values are replaced: a value qualifies when it
// mixes letters and digits, or is at least 24 characters long.
func looksLikeToken(v string) bool {
	if !notMarker(v) {
		return false
	}
	return hasDigitAndLetter(v) || len(v) >= 24
}

// spacedToken is looksLikeToken for a value after "token" written with a
// space, which prose also writes: not a URL ("refresh access token
// https://oauth2…"), a path ("could not load token /home/…") or a model
// id ("Cannot read token kimi-k2-0905-preview": dash-separated segments
// of at most 12 characters).
func spacedToken(v string) bool {
	if !looksLikeToken(v) || strings.Contains(v, "://") || v[0] == '/' || v[0] == '~' || v[0] == '.' {
		return false
	}
	if !strings.Contains(v, "-") {
		return true
	}
	for _, seg := range strings.Split(v, "-") {
		if len(seg) > 12 {
			return true
		}
	}
	return false
}

// asciiLower lower-cases ASCII letters only, so byte offsets match s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func hasDigitAndLetter(v string) bool {
	if !notMarker(v) {
		return false
	}
	var d, l bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			d = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			l = true
		}
	}
	return d && l
}

// notMarker keeps already-redacted values and "<PLACEHOLDER>" text as is.
func notMarker(v string) bool {
	return !strings.HasPrefix(v, "[REDACTED") && !strings.HasPrefix(v, "<") && !strings.Contains(v, "REDACTED")
}
