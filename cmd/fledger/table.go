package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// table is the tabwriter every human-readable listing uses. What it is
// given is made safe for a terminal first: keys and provider text are user
// input, and a session key holding "\x1b[31m" must not recolour (or worse)
// the operator's terminal. Control characters other than the tab and
// newline that separate cells and rows, and Unicode bidi overrides, are
// written as Go escapes (\x1b, \u202e); cells should pass their text
// through cellText so tabs and newlines inside a cell are escaped too.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

func (t *table) Write(p []byte) (int, error) {
	if _, err := t.tw.Write([]byte(escapeControls(string(p), false))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the aligned table.
func (t *table) Flush() error { return t.tw.Flush() }

// cellText escapes every control character of one cell, tabs and newlines
// included, so a cell can never add a column or a row.
func cellText(s string) string { return escapeControls(s, true) }

// escapeControls rewrites control and bidi-override characters as Go
// escapes; with keepLayout false, tab and newline are left alone.
func escapeControls(s string, inCell bool) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r, inCell) {
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
		case unsafeRune(r, inCell):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune, inCell bool) bool {
	if r == '\t' || r == '\n' {
		return inCell
	}
	// Controls, format characters (bidi marks and overrides, zero-width
	// spaces and joiners, BOM, soft hyphen, tag characters), line and
	// paragraph separators, and undecodable bytes.
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 ||
		r == 0x034f || r == utf8.RuneError
}

// termWriter escapes what a terminal would act on in free text (explain,
// run and replay output): every character table escapes except tab and
// newline, which lay the text out. Stored keys and provider text are user
// input; an operator reading them must not have their terminal driven.
type termWriter struct{ w io.Writer }

func newTermWriter(w io.Writer) io.Writer { return termWriter{w} }

func (t termWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, escapeControls(string(p), false)); err != nil {
		return 0, err
	}
	return len(p), nil
}
