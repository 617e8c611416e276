package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/commands/classify"
	"github.com/fledger/fledger/internal/redact"
)

func init() { register(newClassifyCmd) }

// maxClassifyLine bounds one input line (a provider error with its body).
const maxClassifyLine = 64 << 20

type classifyOpts struct {
	table   bool
	asJSON  bool
	now     string
	maxLine int
}

func newClassifyCmd(_ *globals) *cobra.Command {
	o := &classifyOpts{}
	cmd := &cobra.Command{
		Use:   "classify [file ...]",
		Short: "Classify provider errors (JSON Lines) into failover reasons",
		Long: `classify reads provider errors as JSON Lines from the files given, or from
stdin when there are none or a file is "-". Each line is an object with the
fields id, provider, model, status (a number or a string: a numeric one is
the HTTP status, another such as "RESOURCE_EXHAUSTED" is read as a code), code, type,
message, body (string or object), headers, cause (nested object) and name.

For every input line it writes one JSON line, in the same order:
  {"id", "reason", "status", "disposition", "retry_after_ms",
   "request_size_ceiling", "evidence"}

A line that is not a JSON object produces {"line": N, "error": "..."}
instead (with "file" when reading files); the other lines are still
classified and the exit status is 1. Blank lines are skipped. A line longer
than 64 MiB is reported as an error line and skipped.

--table prints an aligned table for people instead of JSON.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassify(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.table, "table", false, "print a table for people instead of JSON Lines")
	f.BoolVar(&o.asJSON, "json", false, "print JSON Lines (the default without --table)")
	cmd.MarkFlagsMutuallyExclusive("table", "json")
	f.StringVar(&o.now, "now", "", "decision time for HTTP-date Retry-After headers (RFC 3339; default: each error's received_at or Date header, else the current time)")
	f.IntVar(&o.maxLine, "max-line-bytes", maxClassifyLine, "longest accepted input line in bytes")
	_ = f.MarkHidden("max-line-bytes")
	return withMomentRule(cmd)
}

// classifyLine is one output line.
type classifyLine struct {
	ID string `json:"id"`
	classify.Result
}

// classifyErrorLine reports a malformed input line.
type classifyErrorLine struct {
	File  string `json:"file,omitempty"`
	Line  int    `json:"line"`
	Error string `json:"error"`
}

func runClassify(cmd *cobra.Command, args []string, o *classifyOpts) error {
	if err := atLeast("--max-line-bytes", o.maxLine, 1, "the line length limit in bytes", ""); err != nil {
		return err
	}
	var now time.Time
	if o.now != "" {
		t, err := moment{flag: "--now"}.parse(o.now, time.Time{})
		if err != nil {
			return err
		}
		now = t
	}
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
	defer out.Flush()
	var w lineWriter = &jsonLineWriter{w: out}
	if o.table {
		tw := &tableLineWriter{tw: tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)}
		defer tw.flush()
		w = tw
	}

	if len(args) == 0 {
		args = []string{"-"}
	}
	bad := 0
	for _, name := range args {
		var r io.Reader
		file := name
		if name == "-" {
			r, file = cmd.InOrStdin(), ""
		} else {
			f, err := os.Open(name)
			if err != nil {
				bad++
				if werr := w.fail(classifyErrorLine{File: name, Error: err.Error()}); werr != nil {
					return werr
				}
				continue
			}
			defer f.Close()
			r = f
		}
		n, err := classifyStream(r, file, now, o.maxLine, w, cmd.ErrOrStderr())
		bad += n
		if err != nil {
			return err
		}
	}
	if bad > 0 {
		w.done()
		return &exitError{code: 1, msg: fmt.Sprintf("classify: %d malformed input line(s)", bad)}
	}
	return nil
}

// classifyStream classifies every line of r. It returns the number of
// malformed lines; err is an I/O error that stops the command.
func classifyStream(r io.Reader, file string, now time.Time, maxLine int, w lineWriter, warn io.Writer) (int, error) {
	ign := ignoredKeys{}
	defer ign.report(warn, file)
	br := bufio.NewReaderSize(r, 256<<10)
	bad := 0
	for lineNo := 1; ; lineNo++ {
		line, tooLong, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return bad, fmt.Errorf("read %s: %w", displayName(file), err)
		}
		if tooLong {
			bad++
			if werr := w.fail(classifyErrorLine{File: file, Line: lineNo, Error: fmt.Sprintf("line longer than %d bytes", maxLine)}); werr != nil {
				return bad, werr
			}
		} else if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			if msg := classifyOne(trimmed, now, w, ign.note(lineNo)); msg != "" {
				bad++
				if werr := w.fail(classifyErrorLine{File: file, Line: lineNo, Error: msg}); werr != nil {
					return bad, werr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return bad, nil
		}
	}
}

// classifyOne decodes and classifies one line; it returns an error message
// for a malformed line. ignored gets the keys the line has that are not
// provider error fields (a misspelt status is no status).
func classifyOne(line []byte, now time.Time, w lineWriter, ignored func([]string)) string {
	if line[0] != '{' {
		return "invalid JSON: want an object"
	}
	var pe classify.ProviderError
	if err := json.Unmarshal(line, &pe); err != nil {
		return "invalid JSON: " + redact.Preview(err.Error(), 200)
	}
	if keys := pe.IgnoredKeys(); len(keys) > 0 {
		ignored(keys)
	}
	when := now
	if when.IsZero() && pe.ReceivedAt.IsZero() && pe.Header("date") == "" {
		when = time.Now()
	}
	res := classify.ClassifyAt(&pe, when)
	if err := w.result(classifyLine{ID: pe.ID, Result: res}); err != nil {
		return "write: " + err.Error()
	}
	return ""
}

// readLine reads one '\n'-terminated line of at most max bytes. A longer
// line is consumed and reported with tooLong. err is io.EOF after the last
// line.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max+1 { // +1: the newline itself
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return buf, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, tooLong, err
		}
	}
}

func displayName(file string) string {
	if file == "" {
		return "stdin"
	}
	return file
}

type lineWriter interface {
	result(classifyLine) error
	fail(classifyErrorLine) error
	done()
}

type jsonLineWriter struct{ w *bufio.Writer }

func (j *jsonLineWriter) write(v any) error {
	enc := json.NewEncoder(j.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
func (j *jsonLineWriter) result(l classifyLine) error    { return j.write(l) }
func (j *jsonLineWriter) fail(e classifyErrorLine) error { return j.write(e) }
func (j *jsonLineWriter) done()                          {}

type tableLineWriter struct {
	tw     *tabwriter.Writer
	header bool
}

func (t *tableLineWriter) head() {
	if !t.header {
		t.header = true
		fmt.Fprintln(t.tw, "ID\tREASON\tSTATUS\tDISPOSITION\tRETRY_MS\tRULE\tFIELD\tMATCH")
	}
}

func (t *tableLineWriter) result(l classifyLine) error {
	t.head()
	retry := "-"
	if l.RetryAfterMs > 0 {
		retry = strconv.FormatInt(l.RetryAfterMs, 10)
	}
	status := "-"
	if l.Status != 0 {
		status = strconv.Itoa(l.Status)
	}
	disp := string(l.Disposition)
	if l.RequestSizeCeiling != nil {
		disp += fmt.Sprintf(" (ceiling %d>%d)", l.RequestSizeCeiling.RequestedTokens, l.RequestSizeCeiling.LimitTokens)
	}
	_, err := fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
		cell(l.ID, 24), l.Reason, status, disp, retry, l.Evidence.Rule, cell(l.Evidence.Field, 32), cell(l.Evidence.Match, 60))
	return err
}

func (t *tableLineWriter) fail(e classifyErrorLine) error {
	t.head()
	where := "line " + strconv.Itoa(e.Line)
	if e.File != "" {
		where = e.File + ":" + strconv.Itoa(e.Line)
	}
	_, err := fmt.Fprintf(t.tw, "%s\tERROR\t-\t-\t-\t-\t-\t%s\n", cell(where, 24), cell(e.Error, 80))
	return err
}

func (t *tableLineWriter) done() {}

func (t *tableLineWriter) flush() { t.tw.Flush() }

// cell keeps a table cell on one line and within n runes.
func cell(s string, n int) string {
	s = cellText(strings.Join(strings.Fields(s), " "))
	if s == "" {
		return "-"
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ignoredKeys gathers, for one input, the keys its lines had that are
// not provider error fields: reported once at its end (a file of
// annotated vectors would otherwise warn on every line), with how many
// lines and the first of them.
type ignoredKeys struct {
	keys  []string
	lines int
	first int
}

// note returns classifyOne's callback for line lineNo.
func (g *ignoredKeys) note(lineNo int) func([]string) {
	return func(keys []string) {
		if g.lines == 0 {
			g.first = lineNo
		}
		g.lines++
		for _, k := range keys {
			if len(g.keys) < 8 && !slices.Contains(g.keys, k) {
				g.keys = append(g.keys, k)
			}
		}
	}
}

// report writes the input's one line, if any key was ignored.
func (g *ignoredKeys) report(warn io.Writer, file string) {
	if g.lines == 0 {
		return
	}
	lines := fmt.Sprintf("line %d", g.first)
	if g.lines > 1 {
		lines = fmt.Sprintf("%d lines, the first line %d", g.lines, g.first)
	}
	fmt.Fprintf(warn, "fledger classify: %s: ignored keys %s (%s): not provider error fields (docs/classification.md, \"Input and output\")\n",
		displayName(file), quoteList(g.keys), lines)
}

// quoteList is keys quoted and joined with ", ".
func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
}
