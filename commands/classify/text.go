package classify

import (
	"strings"
)

// Scan limits. A provider message can be megabytes (an SDK that quotes a
// whole HTML page or a request body); rules only ever look at the first
// scanHead bytes and the last scanTail bytes of any one field, so the cost of
// classification is bounded whatever the input size. Evidence beyond those
// windows is not seen (docs/classification.md "Limits").
const (
	scanHead = 64 << 10
	scanTail = 8 << 10
	// bareMax is the longest text the whole-message ("exactly …") rules
	// consider; all of them are short phrases.
	bareMax = 256
)

// text is one field prepared for the rules: capped, lower-cased once,
// scanned once by the phrase automaton.
type text struct {
	field string    // evidence name: "message", "body", "message#error.message", …
	raw   string    // capped original
	lower string    // lower-cased raw
	bare  string    // lower, trimmed, "xxxError:" prefixes and trailing "." removed; "" when longer than bareMax
	hits  phraseSet // phrases present in lower

	emb     []jfield // JSON found inside the text (lazy)
	embDone bool

	ov     verdict // rule 8 on this text (lazy, see overflow)
	ovOK   bool
	ovDone bool
}

func newText(field, s string) *text {
	if len(s) > scanHead+scanTail {
		s = s[:scanHead] + "\n…\n" + s[len(s)-scanTail:]
	}
	t := &text{field: field, raw: s, lower: strings.ToLower(s)}
	compiled().scan(t.lower, &t.hits)
	if len(t.lower) <= bareMax {
		t.bare = bareText(t.lower)
	}
	return t
}

func (t *text) empty() bool { return t == nil || strings.TrimSpace(t.raw) == "" }

// embedded returns the JSON fields found inside the text (see embedded.go).
func (t *text) embedded() []jfield {
	if !t.embDone {
		t.embDone = true
		t.emb = scanEmbedded(t.raw)
	}
	return t.emb
}

// bareText strips what wrappers add around a short message so the "exactly
// …" rules (reference §2.2 rules 21, 25; §2.5 "exactly terminated") see the
// message itself: surrounding space, leading "Error:", "TypeError:",
// "FailoverError:" prefixes, and trailing dots.
func bareText(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < 4; i++ {
		c := strings.IndexByte(s, ':')
		if c <= 0 || c > 40 {
			break
		}
		head := strings.TrimSpace(s[:c])
		if !strings.HasSuffix(head, "error") || strings.IndexFunc(head, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r == '_' || r == '.' || r == ' ')
		}) >= 0 {
			break
		}
		s = strings.TrimSpace(s[c+1:])
	}
	return strings.TrimRight(s, ". \t\r\n")
}

// leadingStatus returns the HTTP status a message starts with, after an
// optional "error:" and "http" (reference §2.1 step 1): "HTTP 410: No body",
// "402 Payment Required: …", "Error: 400 {…}". 0 when none.
func leadingStatus(lower string) int {
	s := strings.TrimLeft(lower, " \t\r\n")
	if strings.HasPrefix(s, "error") {
		r := strings.TrimLeft(s[len("error"):], " ")
		if strings.HasPrefix(r, ":") {
			s = strings.TrimLeft(r[1:], " ")
		}
	}
	if strings.HasPrefix(s, "http") {
		s = s[len("http"):]
		if strings.HasPrefix(s, "/") { // "HTTP/1.1 502 Bad Gateway"
			if sp := strings.IndexByte(s, ' '); sp > 0 && sp < 6 {
				s = s[sp:]
			}
		}
		s = strings.TrimLeft(s, " ")
	}
	if len(s) < 3 {
		return 0
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0
		}
	}
	if len(s) > 3 && (isWordByte(s[3]) || s[3] == '.') {
		return 0
	}
	n := int(s[0]-'0')*100 + int(s[1]-'0')*10 + int(s[2]-'0')
	if n < 100 || n > 599 {
		return 0
	}
	return n
}
