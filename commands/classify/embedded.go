package classify

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Embedded JSON.
//
// Provider errors travel inside other errors: an SDK message that quotes the
// body ("Error: 400 {"type":"error",…}"), Python reprs of the same
// ("{'error': {'message': …}}"), OpenRouter's metadata.raw (a JSON string
// holding the upstream provider's JSON), Gemini's error.message (a JSON
// string holding another error), Bedrock event-stream dumps
// ({':exception-type': 'serviceUnavailableException', 'body': b'{…}'}) and
// Node's util.inspect output ({ type: 'server_error', code: … }).
//
// scanEmbedded finds those objects leniently: double- or single-quoted
// strings, bare keys, b'…' byte strings, None/True/undefined literals, and a
// truncated tail (fields read before the cut are kept). String values that
// themselves hold JSON are scanned again. Nesting, counted across objects,
// arrays and JSON-in-strings, stops at maxEmbedDepth (25, as reference §2.7's
// error-graph walk); the work per text is capped by embedBudget bytes and
// maxEmbedFields fields. Text has no pointers, so it cannot cycle.

const (
	maxEmbedDepth  = 25
	maxEmbedFields = 256
	maxEmbedStarts = 16
	embedBudget    = 1 << 20
)

// jfield is one interesting scalar found inside embedded JSON.
type jfield struct {
	path string // dotted path, e.g. "error.metadata.raw.error.type"
	key  string // last key, lower-cased
	val  string // string value (unescaped) or literal text
	str  bool   // the value was a string
}

// Kinds of keys the rules read.
const (
	keyOther = iota
	keyMessage
	keyType
	keyCode
	keyHeader
	keyFinish
	// keyStatus: an HTTP status or a provider's numeric status code under
	// its own key ("statusCode", "http_status", MiniMax base_resp
	// "status_code"); read by the inner status and, for a known family,
	// the provider code tables.
	keyStatus
)

func keyKind(k string) int {
	switch k {
	case "message", "msg", "error", "errormessage", "error_message", "detail", "raw", "body", "error_description", "description":
		return keyMessage
	case "type", "type_", "errortype", "error_type", "__type":
		return keyType
	case "code", "status", "reason", "name", ":exception-type", "errorcode", "error_code", "x-amzn-errortype":
		return keyCode
	case "block_reason", "blockreason", "finish_reason", "finishreason", "stop_reason", "stopreason":
		return keyFinish
	case "statuscode", "status_code", "http_status", "httpstatus", "http_status_code", "raw_status_code",
		"upstreamstatus", "upstream_status", "statuscodevalue":
		return keyStatus
	case "retry-after", "retry-after-ms":
		return keyHeader
	}
	// Rate-limit headers a body carries as JSON (OpenRouter's
	// error.metadata.headers): see embeddedHeaders.
	if strings.Contains(k, "ratelimit") {
		return keyHeader
	}
	return keyOther
}

type jscan struct {
	out    []jfield
	stack  []string
	budget int
}

// scanEmbedded returns the interesting fields of every JSON-like object in s.
func scanEmbedded(s string) []jfield {
	if strings.IndexByte(s, '{') < 0 && strings.IndexByte(s, '[') < 0 {
		return nil
	}
	j := &jscan{budget: embedBudget}
	j.scanText(s, 0)
	return j.out
}

func (j *jscan) scanText(s string, depth int) {
	if depth >= maxEmbedDepth {
		return
	}
	if len(s) > scanHead {
		s = s[:scanHead]
	}
	starts := 0
	for i := 0; i < len(s) && starts < maxEmbedStarts && j.budget > 0 && len(j.out) < maxEmbedFields; i++ {
		c := s[i]
		if c != '{' && c != '[' {
			continue
		}
		k := skipSpace(s, i+1)
		if k >= len(s) {
			return
		}
		n := s[k]
		ok := n == '"' || n == '\''
		if c == '{' && isKeyStart(n) {
			ok = true
		}
		if c == '[' && (n == '{' || n == '[') {
			ok = true
		}
		if !ok {
			continue
		}
		starts++
		p := jparser{s: s, i: i, j: j}
		p.value("", depth)
		used := p.i - i
		if used < 1 {
			used = 1
		}
		j.budget -= used
		if p.i > i+1 {
			i = p.i - 1
		}
	}
}

type jparser struct {
	s string
	i int
	j *jscan
}

func (p *jparser) skip() { p.i = skipSpace(p.s, p.i) }

// value parses one value under key at nesting depth; false means the text
// stopped being JSON-like (fields emitted so far are kept).
func (p *jparser) value(key string, depth int) bool {
	p.skip()
	if p.i >= len(p.s) || depth >= maxEmbedDepth || len(p.j.out) >= maxEmbedFields {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(key, depth+1)
	case c == '"' || c == '\'':
		v, ok := p.str()
		if !ok {
			return false
		}
		p.emit(key, v, true, depth)
		return true
	case c == 'b' && p.i+1 < len(p.s) && (p.s[p.i+1] == '\'' || p.s[p.i+1] == '"'):
		p.i++ // Python bytes literal b'…'
		v, ok := p.str()
		if !ok {
			return false
		}
		p.emit(key, v, true, depth)
		return true
	default:
		st := p.i
		for p.i < len(p.s) && isLiteralByte(p.s[p.i]) {
			p.i++
		}
		if p.i == st {
			return false
		}
		p.emit(key, p.s[st:p.i], false, depth)
		return true
	}
}

func (p *jparser) object(depth int) bool {
	if depth >= maxEmbedDepth {
		return false
	}
	p.i++ // '{'
	for {
		p.skip()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == '}' {
			p.i++
			return true
		}
		key, ok := p.key()
		if !ok {
			return false
		}
		p.skip()
		if p.i >= len(p.s) || (p.s[p.i] != ':' && p.s[p.i] != '=') {
			return false
		}
		p.i++
		p.j.stack = append(p.j.stack, key)
		ok = p.value(key, depth)
		p.j.stack = p.j.stack[:len(p.j.stack)-1]
		if !ok {
			return false
		}
		p.skip()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *jparser) array(key string, depth int) bool {
	if depth >= maxEmbedDepth {
		return false
	}
	p.i++ // '['
	for {
		p.skip()
		if p.i >= len(p.s) {
			return false
		}
		if p.s[p.i] == ']' {
			p.i++
			return true
		}
		if !p.value(key, depth) {
			return false
		}
		p.skip()
		if p.i >= len(p.s) {
			return false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *jparser) key() (string, bool) {
	if c := p.s[p.i]; c == '"' || c == '\'' {
		return p.str()
	}
	st := p.i
	for p.i < len(p.s) && isKeyByte(p.s[p.i]) {
		p.i++
	}
	if p.i == st || !isKeyStart(p.s[st]) {
		return "", false
	}
	return p.s[st:p.i], true
}

// str reads a quoted string at p.i, unescaping JSON and Python escapes.
func (p *jparser) str() (string, bool) {
	q := p.s[p.i]
	st := p.i + 1
	esc := false
	k := st
	for ; k < len(p.s); k++ {
		c := p.s[k]
		if c == '\\' {
			esc = true
			k++
			continue
		}
		if c == q {
			break
		}
	}
	if k >= len(p.s) {
		return "", false
	}
	p.i = k + 1
	if !esc {
		return p.s[st:k], true
	}
	return unescape(p.s[st:k]), true
}

func (p *jparser) emit(key, v string, str bool, depth int) {
	kind := keyKind(strings.ToLower(key))
	if str && looksLikeJSON(v) {
		p.j.scanText(v, depth+1)
		if kind != keyMessage {
			return
		}
		// A message that is itself JSON contributes its inner fields only.
		return
	}
	if kind == keyOther || len(p.j.out) >= maxEmbedFields {
		return
	}
	p.j.out = append(p.j.out, jfield{
		path: strings.Join(p.j.stack, "."),
		key:  strings.ToLower(key),
		val:  v,
		str:  str,
	})
}

// looksLikeJSON: a string value worth scanning again (OpenRouter
// metadata.raw, Gemini error.message, Bedrock body).
func looksLikeJSON(v string) bool {
	t := strings.TrimSpace(v)
	if t == "" {
		return false
	}
	if t[0] == '{' || t[0] == '[' {
		return true
	}
	return strings.Contains(v, `{"`) || strings.Contains(v, `{'`)
}

func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					r := rune(n)
					i += 4
					if r >= 0xD800 && r < 0xDC00 && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
						if m, err := strconv.ParseUint(s[i+3:i+7], 16, 32); err == nil && m >= 0xDC00 && m < 0xE000 {
							r = (r-0xD800)<<10 + (rune(m) - 0xDC00) + 0x10000
							i += 6
						}
					}
					if !utf8.ValidRune(r) {
						r = utf8.RuneError
					}
					b.WriteRune(r)
					continue
				}
			}
			b.WriteByte(e)
		case 'x':
			if i+2 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
					b.WriteByte(byte(n))
					i += 2
					continue
				}
			}
			b.WriteByte(e)
		default: // \" \' \\ \/ and anything else: the character itself
			b.WriteByte(e)
		}
	}
	return b.String()
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// isKeyStart and isKeyByte describe bare (unquoted) keys, as in Node's
// util.inspect output: { type: 'server_error' }.
func isKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c == '@'
}

func isKeyByte(c byte) bool {
	return isKeyStart(c) || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func isLiteralByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-' || c == '_'
}
