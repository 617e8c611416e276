package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/fledger/fledger/internal/termtext"
)

// table is the tabwriter every human-readable listing uses. What it is
// given is made safe for a terminal first: keys and provider text are user
// input, and a session key holding "\x1b[31m" must not recolour (or worse)
// the operator's terminal. Control characters other than the tab and
// newline that separate cells and rows, and Unicode bidi overrides, are
// written as Go escapes (\x1b, \u202e); cells should pass their text
// through cellText so tabs and newlines inside a cell are escaped too.
type table struct {
	tw *tabwriter.Writer
	// stream, when set, prints each line at once (newStreamTable).
	stream *streamCols
}

func newTable(w io.Writer) *table {
	return &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
}

// newStreamTable is a table for rows that come one by one (a follower):
// each line is printed as it is written, its cells padded to the widest
// cell of their column so far, at least min[i]. A tabwriter flushed per
// row aligns each row only with itself (the first row of `events
// --follow` was padded unlike the rest); the widths only grow, so rows
// stay aligned until a wider cell comes.
func newStreamTable(w io.Writer, min ...int) *table {
	return &table{stream: &streamCols{w: w, widths: append([]int(nil), min...)}}
}

func (t *table) Write(p []byte) (int, error) {
	text := termtext.Text(string(p))
	if t.stream != nil {
		if err := t.stream.write(text); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if _, err := t.tw.Write([]byte(text)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the aligned table (a stream table has nothing held).
func (t *table) Flush() error {
	if t.stream != nil {
		return nil
	}
	return t.tw.Flush()
}

// streamCols pads the tab-separated cells of whole lines to growing
// column widths, two spaces apart, as the tabwriter does; the last cell
// is not padded.
type streamCols struct {
	w      io.Writer
	widths []int
}

func (c *streamCols) write(text string) error {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		for i, cell := range cells {
			b.WriteString(cell)
			if i == len(cells)-1 {
				break
			}
			for len(c.widths) <= i {
				c.widths = append(c.widths, 0)
			}
			n := utf8.RuneCountInString(cell)
			c.widths[i] = max(c.widths[i], n)
			b.WriteString(strings.Repeat(" ", c.widths[i]-n+2))
		}
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(c.w, b.String())
	return err
}

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
