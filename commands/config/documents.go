package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yamlnode "go.yaml.in/yaml/v3"
)

// documentsProblem says why data, a config file's text, is not one YAML
// document ("" = it is): the YAML reader under [Parse] reads only the
// first document of a stream, so a file holding a second one would have
// the rest silently dropped (an empty first document applied as the whole
// config). A single leading "---", and a trailing "---" or "..." with
// nothing but comments after it, are fine.
//
// Documents are found by their markers: a line that starts with "---" or
// "..." followed by a space, a tab or the line's end. YAML reserves such a
// line, at column 0, for a marker wherever it stands (a scalar cannot
// hold one), so a second document is found even when it does not parse.
// A document after "---" counts even when empty (the file says it starts
// there); text after "..." with no "---" is a document only when it holds
// more than blank lines, comments and directives.
func documentsProblem(data []byte) string {
	type doc struct {
		line    int  // 1-based line where it starts
		content bool // holds more than blank lines, comments, directives
	}
	var docs []doc
	cur := doc{line: 1}
	explicit := false // cur was opened by "---"
	flush := func() {
		if explicit || cur.content {
			docs = append(docs, cur)
		}
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line = bytes.TrimRight(line, "\r")
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a BOM
		}
		switch {
		case isMarker(line, "---"):
			flush()
			cur, explicit = doc{line: n}, true
			// "--- {a: 1}": the document's content may start on the
			// marker's line.
			cur.content = hasContent(line[3:])
		case isMarker(line, "..."):
			flush()
			cur, explicit = doc{line: n + 1}, false
		case !cur.content && hasContent(line) && line[0] != '%':
			if !explicit {
				cur.line = n
			}
			cur.content = true
		}
	}
	flush()
	for i, d := range docs {
		if i > 0 && d.content {
			return fmt.Sprintf("holds %d YAML documents; a config is one document (the %s starts at line %d)",
				len(docs), ordinal(i+1), d.line)
		}
	}
	return ""
}

// isMarker reports whether line is the document marker m ("---" or
// "...") at column 0, alone or followed by white space.
func isMarker(line []byte, m string) bool {
	return bytes.HasPrefix(line, []byte(m)) && (len(line) == len(m) || line[len(m)] == ' ' || line[len(m)] == '\t')
}

// hasContent reports whether line holds more than white space and a
// comment.
func hasContent(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	return len(t) > 0 && t[0] != '#'
}

// ordinal spells n (2 or more) as "second", "third", "4th", "21st".
func ordinal(n int) string {
	switch {
	case n == 2:
		return "second"
	case n == 3:
		return "third"
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// trailingProblem says why data has more after its first value than a
// YAML document may ("" = nothing): `{…}` followed by a second `{…}`, or
// by any text, with no "---" between. The reader under [Parse] takes the
// first value and drops the rest without a word, as it did a second
// document. A first value that does not parse is left to that reader.
func trailingProblem(data []byte) string {
	dec := yamlnode.NewDecoder(bytes.NewReader(data))
	var first, next yamlnode.Node
	if err := dec.Decode(&first); err != nil {
		return ""
	}
	for {
		// Documents after "---" are documentsProblem's: an empty one is
		// fine, one with content was refused there.
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			break
		}
	}
	return fmt.Sprintf("has more after its first value, from line %d: a config is one mapping (the reader would drop the rest)", trailingLine(data, lastLine(&first)))
}

// lastLine is the last line of n's subtree that holds a node.
func lastLine(n *yamlnode.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLine(c))
	}
	return l
}

// trailingLine is the line where what follows a value ending on line
// last starts: the first later line holding more than closing brackets,
// commas, white space and comments, else last itself (the rest is on
// that line).
func trailingLine(data []byte, last int) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if i+1 <= last {
			continue
		}
		if t := bytes.Trim(line, " \t\r}],"); len(t) > 0 && t[0] != '#' {
			return i + 1
		}
	}
	return last
}
