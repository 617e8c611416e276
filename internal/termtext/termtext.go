// Package termtext makes stored text safe to print on a terminal. Keys,
// an auth order's by, provider error previews and notices are input of
// clients and providers, and a ledger written by an earlier build may
// hold any character in them: a "\x1b[2J" must not drive the operator's
// terminal, and a "\n" inside a value must not print a line of its own
// (a forged line of explain or of a table). Such characters are written
// as Go escapes (\n, \x1b, \u202e), visibly.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line is s as one line: every control and format character, tab and
// newline included, escaped. Use it for each value interpolated into a
// line or a table cell.
func Line(s string) string { return escape(s, true) }

// Text is s with every control and format character escaped except tab
// and newline, which lay out text whose lines are the program's own
// (explain's or replay's output as a whole).
func Text(s string) string { return escape(s, false) }

// Args is args with each string and fmt.Stringer made a [Line], for
// fmt.Fprintf of one line: other values (numbers, times formatted by the
// caller) are left as they are.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = Line(v)
		case fmt.Stringer:
			out[i] = Line(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

func escape(s string, line bool) string {
	clean := true
	for _, r := range s {
		if unsafe(r, line) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r, line):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafe(r rune, line bool) bool {
	if r == '\t' || r == '\n' {
		return line
	}
	// Controls, format characters (bidi marks and overrides, zero-width
	// spaces and joiners, BOM, soft hyphen, tag characters), line and
	// paragraph separators, and undecodable bytes.
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 ||
		r == 0x034f || r == utf8.RuneError
}

// Reorders reports the characters that change how the text around them
// is laid out rather than standing for themselves: the bidirectional
// marks, embeddings, overrides and isolates (an id holding U+202E prints
// the rest of its line backwards: "Trojan Source") and the line and
// paragraph separators (a line break to many terminals and editors).
// Other format characters (a zero-width joiner in an emoji sequence, a
// soft hyphen) are not: a chat name may hold them. Printers escape all of
// them anyway ([Line]); new ids and config ids are refused with one.
func Reorders(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F, // Arabic letter mark, LRM, RLM
		r >= 0x202A && r <= 0x202E, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069, // LRI, RLI, FSI, PDI
		r == 0x2028, r == 0x2029:   // line and paragraph separators
		return true
	}
	return false
}
