package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fledger/fledger/internal/termtext"
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
	if _, err := t.tw.Write([]byte(termtext.Text(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the aligned table.
func (t *table) Flush() error { return t.tw.Flush() }

// cellText escapes every control character of one cell, tabs and newlines
// included, so a cell can never add a column or a row.
func cellText(s string) string { return termtext.Line(s) }

// cellTexts is ids as one line, each a [cellText], separated by spaces.
func cellTexts(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = cellText(id)
	}
	return strings.Join(out, " ")
}

// linef writes format to w with each string or Stringer value made one
// line ([termtext.Args]): a stored value never adds a line of its own.
func linef(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, termtext.Args(args)...)
}

// termWriter escapes what a terminal would act on in free text (explain,
// run and replay output): every character table escapes except tab and
// newline, which lay the text out. Stored keys and provider text are user
// input; an operator reading them must not have their terminal driven.
type termWriter struct{ w io.Writer }

func newTermWriter(w io.Writer) io.Writer { return termWriter{w} }

func (t termWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, termtext.Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
