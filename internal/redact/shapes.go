package redact

import "strings"

// The hand-written scanners of rules whose shape is neither a regex with a
// literal prefix nor a single key=value: each runs in one forward pass
// (every search resumes after the previous span), so String stays linear.

const pemLabelMax = 80 // "-----BEGIN ENCRYPTED PRIVATE KEY-----" and kin

// pemSpans finds PEM private key blocks, BEGIN line to END line. A block
// whose END line is missing (a cut preview) is redacted to the end of s.
func pemSpans(s, lower string) []span {
	var out []span
	for i := 0; i < len(lower); {
		k := strings.Index(lower[i:], "-----begin ")
		if k < 0 {
			break
		}
		k += i
		ls := k + len("-----begin ")
		le := strings.Index(lower[ls:min(len(lower), ls+pemLabelMax)], "-----")
		if le < 0 {
			i = ls
			continue
		}
		body := ls + le + len("-----")
		if !strings.Contains(lower[ls:ls+le], "private") {
			i = body // a certificate or public key: not secret
			continue
		}
		e := strings.Index(lower[body:], "-----end ")
		if e < 0 {
			out = append(out, span{st: k, en: len(s)})
			break
		}
		e += body + len("-----end ")
		end := len(s)
		if c := strings.Index(lower[e:min(len(lower), e+pemLabelMax)], "-----"); c >= 0 {
			end = e + c + len("-----")
		}
		out = append(out, span{st: k, en: end})
		i = end
	}
	return out
}

// userinfoSpans finds the user[:password] of "scheme://user:password@host":
// the authority's text before its last '@'.
func userinfoSpans(s, _ string) []span {
	var out []span
	for i := 0; i < len(s); {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			break
		}
		a := k + i + 3
		e, at := a, -1
		for e < len(s) && !isAuthorityEnd(s[e]) {
			if s[e] == '@' {
				at = e
			}
			e++
		}
		if at > a && notMarker(s[a:at]) {
			out = append(out, span{st: a, en: at})
		}
		i = max(a, e-1) // the next "://" may start at the ':' that ended this one

	}
	return out
}

func isAuthorityEnd(c byte) bool {
	switch c {
	case '/', '?', '#', ' ', '\t', '\r', '\n', '"', '\'', '<', '>', '\\', '`', '(', ')', '{', '}', '[', ']':
		return true
	}
	return false
}

// headerValues calls f, in order of position per name, with the value of every "name: value" / "name=value"
// (optionally quoted, as in JSON or a Python dict) for the names, matched
// case-insensitively at a word boundary ('-' may precede a name, as in
// Proxy-Authorization and Set-Cookie). An unquoted value runs to the end
// of its line (a real or a JSON-escaped line break); a quoted one to its
// closing quote.
func headerValues(s, lower string, names []string, f func(st, en int)) {
	for _, name := range names {
		for i := 0; i < len(lower); {
			k := strings.Index(lower[i:], name)
			if k < 0 {
				break
			}
			k += i
			i = k + 1
			if k > 0 && isWordByte(lower[k-1]) {
				continue
			}
			j := k + len(name)
			if j < len(lower) && (isWordByte(lower[j]) || lower[j] == '-') {
				continue
			}
			j = skipQuote(s, j)
			j = skipSpaces(s, j)
			if j >= len(s) || s[j] != ':' && s[j] != '=' {
				continue
			}
			j = skipSpaces(s, j+1)
			q := j
			j = skipQuote(s, j)
			var e int
			if j > q {
				e, _ = closingQuote(s, j, s[q:j])
			} else {
				e = lineEnd(s, j)
			}
			for e > j && (s[e-1] == ' ' || s[e-1] == '\t') {
				e--
			}
			if e > j {
				f(j, e)
				i = e
			}
		}
	}
}

// lineEnd is the end of the line starting at i: a '\r' or '\n', or their
// JSON escapes `\r` and `\n`.
func lineEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\r', '\n':
			return i
		case '\\':
			if i+1 < len(s) && (s[i+1] == 'r' || s[i+1] == 'n') {
				return i
			}
		}
	}
	return len(s)
}

// authSchemes are Authorization schemes whose parameters are credentials
// whatever they look like.
var authSchemes = map[string]bool{
	"basic": true, "bearer": true, "digest": true, "negotiate": true, "ntlm": true, "kerberos": true,
	"aws4-hmac-sha256": true, "hoba": true, "mutual": true, "token": true, "apikey": true, "api-key": true,
	"sharedkey": true, "sharedkeylite": true, "hmac": true, "hmac-sha256": true, "signature": true, "dpop": true,
}

// authHeaderSpans finds Authorization / Proxy-Authorization credentials of
// any scheme. A value that is itself credential-shaped is replaced whole;
// otherwise the first word is the scheme and is kept, and the rest is
// replaced when the scheme is known or the rest holds a credential-shaped
// token. A rest that is already a single marker ("Bearer [REDACTED:…]") is
// left alone, so String stays idempotent; prose ("authorization: failed")
// is kept.
func authHeaderSpans(s, lower string) []span {
	var out []span
	headerValues(s, lower, []string{"authorization"}, func(st, en int) {
		v := s[st:en]
		first := v
		if n := strings.IndexAny(v, " \t"); n >= 0 {
			first = v[:n]
		}
		if isMarker(v) || isMarker(first) && len(first) == len(v) {
			return
		}
		if !isMarker(first) && credentialShaped(first) && !authSchemes[strings.ToLower(first)] {
			out = append(out, span{st: st, en: en})
			return
		}
		rs := skipSpaces(s, st+len(first))
		if rs >= en {
			return
		}
		rest := s[rs:en]
		if isMarker(rest) {
			return
		}
		if authSchemes[strings.ToLower(first)] || strings.Contains(rest, "[REDACTED:") || hasCredentialToken(rest) {
			out = append(out, span{st: rs, en: en})
		}
	})
	return out
}

// cookieHeaderSpans finds Cookie / Set-Cookie header values, replaced whole.
func cookieHeaderSpans(s, lower string) []span {
	var out []span
	headerValues(s, lower, []string{"cookie"}, func(st, en int) {
		if v := s[st:en]; !isMarker(v) && quotedValue(v) {
			out = append(out, span{st: st, en: en})
		}
	})
	return out
}

// secretKeySpans finds values after a compound key naming a secret. With
// aws it takes the AWS keys (aws_secret_access_key, "SecretAccessKey",
// aws_session_token, …); without, any other key whose name holds
// "secret", "password", "passwd" or "credential" (db_password,
// clientSecret, …). A quoted value is replaced whatever its shape
// (quotedValue); an unquoted one when credential-shaped.
func secretKeySpans(aws bool) func(s, lower string) []span {
	return func(s, lower string) []span {
		var out []span
		for i := 0; i < len(lower); {
			if !isKeyNameByte(lower[i]) {
				i++
				continue
			}
			ks := i
			for i < len(lower) && isKeyNameByte(lower[i]) {
				i++
			}
			isAWS, isSecret := secretKeyName(lower[ks:i])
			if aws && !isAWS || !aws && (isAWS || !isSecret) {
				continue
			}
			j := skipQuote(s, i)
			j = skipSpaces(s, j)
			if j >= len(s) || s[j] != ':' && s[j] != '=' {
				continue
			}
			j = skipSpaces(s, j+1)
			q := j
			j = skipQuote(s, j)
			if j > q {
				if e, ok := closingQuote(s, j, s[q:j]); ok && e > j {
					out = append(out, span{st: j, en: e, quoted: true})
					i = e
				}
				continue
			}
			e := j
			for e < len(s) && isSecretByte(s[e]) && s[e] != '\\' {
				e++
			}
			if v := s[j:e]; e > j && (looksLikeToken(v) || aws && len(v) >= 16 && notMarker(v) && isBase64ish(v)) {
				out = append(out, span{st: j, en: e})
			}
			i = max(i, e)
		}
		return out
	}
}

func isKeyNameByte(c byte) bool { return isWordByte(c) || c == '-' || c == '.' }

// secretKeyName classifies a lower-cased key name.
func secretKeyName(k string) (isAWS, isSecret bool) {
	if !strings.Contains(k, "secret") && !strings.Contains(k, "passw") && !strings.Contains(k, "credential") &&
		!strings.Contains(k, "token") {
		return false, false // the common case, without allocating
	}
	n := strings.NewReplacer("_", "", "-", "", ".", "").Replace(k)
	isAWS = strings.Contains(n, "secretaccesskey") ||
		strings.Contains(n, "aws") && (strings.Contains(n, "secret") || strings.Contains(n, "sessiontoken") || strings.Contains(n, "securitytoken"))
	isSecret = strings.Contains(n, "secret") || strings.Contains(n, "password") || strings.Contains(n, "passwd") || strings.Contains(n, "credential")
	return isAWS, isSecret
}

// quotedValue reports whether a quoted value after a secret-looking key is
// worth replacing: anything but empty, null-like, placeholder, mask or
// prose text.
func quotedValue(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || !notMarker(v) || strings.Count(v, " ") >= 2 {
		return false
	}
	switch strings.ToLower(v) {
	case "null", "none", "nil", "undefined", "true", "false", "redacted", "hidden", "string", "n/a":
		return false
	}
	return strings.Trim(v, "*xX•.") != ""
}

// isMarker reports whether v is exactly one [REDACTED:…] marker.
func isMarker(v string) bool {
	return strings.HasPrefix(v, "[REDACTED:") && strings.IndexByte(v, ']') == len(v)-1
}

// credentialShaped: a token-like or base64-like word.
func credentialShaped(v string) bool { return looksLikeToken(v) || looksLikeBase64(v) }

// hasCredentialToken reports whether any word of v (split at spaces,
// quotes, ',', ';' and '=') is credential-shaped.
func hasCredentialToken(v string) bool {
	for _, w := range strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ',' || r == ';' || r == '=' || r == '"' || r == '\''
	}) {
		if credentialShaped(w) {
			return true
		}
	}
	return false
}

func isBase64Byte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isBase64ish(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isBase64Byte(v[i]) && v[i] != '=' {
			return false
		}
	}
	return true
}

// looksLikeBase64 accepts an encoded credential ("dXNlcjpwYXNzd29yZA==")
// and rejects a word ("authentication", "Authentication"): at least 8
// base64 bytes with a digit, '=' padding, or an upper-case letter after
// the first byte next to lower-case ones.
func looksLikeBase64(v string) bool {
	if len(v) < 8 || !notMarker(v) || !isBase64ish(v) {
		return false
	}
	var digit, lower, innerUpper bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z' && i > 0:
			innerUpper = true
		}
	}
	return digit || strings.HasSuffix(v, "=") || innerUpper && lower
}

// looksLikeSessionID: token-shaped, or a long run of token bytes.
func looksLikeSessionID(v string) bool {
	if looksLikeToken(v) {
		return true
	}
	if len(v) < 16 || !notMarker(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isTokenByte(v[i]) && v[i] != '%' && v[i] != '=' {
			return false
		}
	}
	return true
}

// mayHoldKeyedSecret is mayHoldSecret's complement for short quoted
// values ("password": "abc"): a ':' or '=' and a secret-looking key word.
func mayHoldKeyedSecret(lower string) bool {
	if strings.Contains(lower, "-----begin ") {
		return true
	}
	if !strings.ContainsAny(lower, ":=") {
		return false
	}
	for _, w := range []string{"pass", "pwd", "secret", "token", "auth", "cookie", "sid", "session", "key", "credential", "basic", "://", "begin"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
