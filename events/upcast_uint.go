package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// upUint64AsString is the upcaster of a version that writes field, a
// uint64, as a decimal string instead of a JSON number (issue 19: a
// JavaScript number, and jq, round an integer above 2^53, so a seed read
// outside Go was wrong). The stored number's own digits become the string
// — never through a float64 — and every other byte of the payload is kept
// as stored.
//
// The stored value must be what a uint64 decodes from: an integer from 0
// to 18446744073709551615 written without fraction or exponent; anything
// else (negative, 1.5, 1e3, out of range, a string) is refused with an
// error naming the field, as decoding the stored version refused it. A
// null, which that decoding read as 0, is kept (it reads as 0 still), and
// so is a payload that is not an object (the decoder judges it). Keys are
// matched as the decoder matches them: case-insensitively, every
// duplicate converted.
func upUint64AsString(field string) Upcaster {
	return func(p json.RawMessage) (json.RawMessage, error) {
		spans, err := valueSpans(p, field)
		if err != nil {
			return nil, err
		}
		if len(spans) == 0 {
			return p, nil
		}
		out := make([]byte, 0, len(p)+2*len(spans))
		last := 0
		for _, s := range spans {
			v := p[s.start:s.end]
			if string(v) == "null" {
				continue
			}
			if err := uint64Digits(v); err != nil {
				return nil, fmt.Errorf("field %s: %w", field, err)
			}
			out = append(out, p[last:s.start]...)
			out = append(out, '"')
			out = append(out, v...)
			out = append(out, '"')
			last = s.end
		}
		return append(out, p[last:]...), nil
	}
}

// span is where one value lies in a payload: p[start:end].
type span struct{ start, end int }

// valueSpans returns where the values of p's top-level keys equal to field
// (case-insensitively) lie, in order; none when p is not an object. It
// scans p by hand (a json.Decoder costs ten times a payload's decoding);
// p is a stored payload, already checked to be JSON, but a malformed one
// is an error, never a panic.
func valueSpans(p []byte, field string) ([]span, error) {
	i := skipSpace(p, 0)
	if i == len(p) || p[i] != '{' {
		return nil, nil
	}
	var out []span
	name := []byte(field)
	i = skipSpace(p, i+1)
	if i < len(p) && p[i] == '}' {
		return nil, nil
	}
	for {
		if i == len(p) || p[i] != '"' {
			return nil, errors.New("payload: malformed object")
		}
		kEnd, err := skipString(p, i)
		if err != nil {
			return nil, err
		}
		key := p[i+1 : kEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if err := json.Unmarshal(p[i:kEnd], &k); err != nil {
				return nil, fmt.Errorf("payload: %w", err)
			}
			key = []byte(k)
		}
		i = skipSpace(p, kEnd)
		if i == len(p) || p[i] != ':' {
			return nil, errors.New("payload: malformed object")
		}
		vStart := skipSpace(p, i+1)
		vEnd, err := skipValue(p, vStart)
		if err != nil {
			return nil, err
		}
		if bytes.EqualFold(key, name) {
			out = append(out, span{vStart, vEnd})
		}
		i = skipSpace(p, vEnd)
		switch {
		case i < len(p) && p[i] == ',':
			i = skipSpace(p, i+1)
		case i < len(p) && p[i] == '}':
			return out, nil
		default:
			return nil, errors.New("payload: malformed object")
		}
	}
}

func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at p[i] ('"').
func skipString(p []byte, i int) (int, error) {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errors.New("payload: unterminated string")
}

// skipValue returns the index after the value starting at p[i].
func skipValue(p []byte, i int) (int, error) {
	if i == len(p) {
		return 0, errors.New("payload: missing value")
	}
	switch p[i] {
	case '"':
		return skipString(p, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(p); j++ {
			switch p[j] {
			case '"':
				end, err := skipString(p, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errors.New("payload: unterminated value")
	}
	j := i
literal:
	for ; j < len(p); j++ {
		switch p[j] {
		case ' ', '\t', '\r', '\n', ',', '}', ']':
			break literal
		}
	}
	if j == i {
		return 0, errors.New("payload: missing value")
	}
	return j, nil
}

// maxUint64 is 2^64−1 in words, for errors.
const maxUint64 = "18446744073709551615"

// uint64Digits checks that v, a JSON value as stored, is a number a uint64
// holds exactly: decimal digits only, at most 2^64−1. Errors quote v (its
// first 40 bytes).
func uint64Digits(v []byte) error {
	q := string(v)
	if len(q) > 40 {
		q = q[:40] + "…"
	}
	switch {
	case len(v) == 0:
		return errors.New("no value")
	case v[0] == '"':
		return fmt.Errorf("%s is a string; this version stored a JSON number", q)
	case v[0] == '-':
		return fmt.Errorf("%s is negative; want an unsigned integer from 0 to %s", q, maxUint64)
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return fmt.Errorf("%s is not an integer from 0 to %s", q, maxUint64)
		}
	}
	if _, err := strconv.ParseUint(string(v), 10, 64); err != nil {
		return fmt.Errorf("%s is out of range; want an unsigned integer from 0 to %s", q, maxUint64)
	}
	return nil
}
