package events

import (
	"fmt"
	"strings"
)

// SubjectPrefix is the first token of every fledger subject; the stream
// captures SubjectPrefix + ".>".
const SubjectPrefix = "fledger"

// Limits on subject parts, in bytes of the raw (unencoded) input.
const (
	// MaxKeyLen is the longest aggregate key accepted (encoded it is at most
	// three times longer, well inside NATS's 4 KiB control line).
	MaxKeyLen = 512
	// MaxAgentLen is the longest agent id accepted.
	MaxAgentLen = 128
)

// keep reports whether b stays as itself in an encoded token. Everything
// else, including '%', is written as %XX (upper-case hex of the byte).
func keep(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' ||
		b == '_' || b == '-' || b == ':' || b == '@'
}

const hexDigits = "0123456789ABCDEF"

// EncodeToken encodes s as one NATS subject token: bytes in
// [A-Za-z0-9_:@-] are kept, every other byte (including '.', '*', '>',
// '%', '$', whitespace, control and non-ASCII bytes) becomes %XX. The
// result can never add a token or a wildcard, and [DecodeToken] gives s
// back. "openai:user@example.com" encodes as "openai:user@example%2Ecom".
// An empty s encodes as "" (callers reject it, see [Subject]).
func EncodeToken(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !keep(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	return b.String()
}

// DecodeToken reverses [EncodeToken]. It returns an error wrapping
// [ErrInvalidSubject] for a token EncodeToken could not have produced (a
// byte outside the kept set, or a malformed or lower-case escape).
func DecodeToken(tok string) (string, error) {
	if strings.IndexByte(tok, '%') < 0 {
		for i := 0; i < len(tok); i++ {
			if !keep(tok[i]) {
				return "", fmt.Errorf("%w: token %q has unencoded byte %q at %d", ErrInvalidSubject, tok, tok[i], i)
			}
		}
		return tok, nil
	}
	b := make([]byte, 0, len(tok))
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '%':
			if i+2 >= len(tok) {
				return "", fmt.Errorf("%w: token %q has a truncated escape at %d", ErrInvalidSubject, tok, i)
			}
			hi, lo := unhex(tok[i+1]), unhex(tok[i+2])
			if hi < 0 || lo < 0 {
				return "", fmt.Errorf("%w: token %q has a bad escape at %d", ErrInvalidSubject, tok, i)
			}
			d := byte(hi<<4 | lo)
			if keep(d) {
				return "", fmt.Errorf("%w: token %q escapes %q, which is never escaped", ErrInvalidSubject, tok, d)
			}
			b = append(b, d)
			i += 2
		case keep(c):
			b = append(b, c)
		default:
			return "", fmt.Errorf("%w: token %q has unencoded byte %q at %d", ErrInvalidSubject, tok, c, i)
		}
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// validAggregate reports whether a is a plain lower-case identifier token.
func validAggregate(a Aggregate) bool {
	if a == "" || len(a) > 64 {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func checkPart(what, s string, max int) error {
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidSubject, what)
	}
	if len(s) > max {
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrInvalidSubject, what, len(s), max)
	}
	return nil
}

// Subject returns fledger.<agent>.<aggregate>.<key> with agent and key
// encoded by [EncodeToken]. It returns an error wrapping
// [ErrInvalidSubject] for an empty agent or key, one over [MaxAgentLen] /
// [MaxKeyLen] bytes, or an aggregate that is not a lower-case identifier.
func Subject(agent string, agg Aggregate, key string) (string, error) {
	if err := checkPart("agent", agent, MaxAgentLen); err != nil {
		return "", err
	}
	if err := checkPart("key", key, MaxKeyLen); err != nil {
		return "", err
	}
	if !validAggregate(agg) {
		return "", fmt.Errorf("%w: aggregate %q is not a lower-case identifier", ErrInvalidSubject, agg)
	}
	return SubjectPrefix + "." + EncodeToken(agent) + "." + string(agg) + "." + EncodeToken(key), nil
}

// MustSubject is [Subject] for inputs known to be valid; it panics on error.
func MustSubject(agent string, agg Aggregate, key string) string {
	s, err := Subject(agent, agg, key)
	if err != nil {
		panic(err)
	}
	return s
}

// AggregateFilter returns the wildcard filter fledger.<agent>.<aggregate>.>
// matching every instance of one aggregate of one agent, for use as an
// append guard ([Store.AppendGuarded]) or a read filter. An empty agent
// matches every agent (fledger.*.<aggregate>.>).
func AggregateFilter(agent string, agg Aggregate) (string, error) {
	if !validAggregate(agg) {
		return "", fmt.Errorf("%w: aggregate %q is not a lower-case identifier", ErrInvalidSubject, agg)
	}
	a := "*"
	if agent != "" {
		if err := checkPart("agent", agent, MaxAgentLen); err != nil {
			return "", err
		}
		a = EncodeToken(agent)
	}
	return SubjectPrefix + "." + a + "." + string(agg) + ".>", nil
}

// AgentPrefix is the prefix fledger.<agent>. (the agent encoded as by
// [EncodeToken]) that every subject of agent's aggregates begins with: a
// follower that reads the whole stream tells its agent's commits from the
// others' by it.
func AgentPrefix(agent string) string { return SubjectPrefix + "." + EncodeToken(agent) + "." }

// ParseSubject splits a subject made by [Subject] back into agent,
// aggregate and key, decoding the tokens.
func ParseSubject(subject string) (agent string, agg Aggregate, key string, err error) {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 || parts[0] != SubjectPrefix {
		return "", "", "", fmt.Errorf("%w: %q is not fledger.<agent>.<aggregate>.<key>", ErrInvalidSubject, subject)
	}
	if agent, err = DecodeToken(parts[1]); err != nil {
		return "", "", "", err
	}
	if key, err = DecodeToken(parts[3]); err != nil {
		return "", "", "", err
	}
	agg = Aggregate(parts[2])
	if agent == "" || key == "" || !validAggregate(agg) {
		return "", "", "", fmt.Errorf("%w: %q has an empty or malformed part", ErrInvalidSubject, subject)
	}
	return agent, agg, key, nil
}

// subjectAgent is the agent a stored commit's subject names: its second
// token, decoded ([DecodeToken] allocates only for an escaped one).
func subjectAgent(subject string) (string, error) {
	rest, ok := strings.CutPrefix(subject, SubjectPrefix+".")
	tok, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || tok == "" {
		return "", fmt.Errorf("%w: %q is not fledger.<agent>.<aggregate>.<key>", ErrInvalidSubject, subject)
	}
	return DecodeToken(tok)
}

// SubjectOf returns the subject of the aggregate instance an envelope
// belongs to.
func SubjectOf(e *Envelope) (string, error) { return Subject(e.Agent, e.Aggregate, e.Key) }
