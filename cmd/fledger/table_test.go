package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A key holding terminal escapes, tabs or bidi overrides prints as visible
// escapes and never adds a column, a row or a colour.
func TestTable_EscapesControlCharacters(t *testing.T) {
	var out bytes.Buffer
	tw := newTable(&out)
	fmt.Fprintln(tw, "KEY\tNEXT")
	fmt.Fprintf(tw, "%s\t%s\n", cellText("s\x1b[31mred\tx\ny\u202eevil\x00"), "ok")
	fmt.Fprintf(tw, "%s\t%s\n", "plain\x07bell", "ok")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, bad := range []string{"\x1b", "\x00", "\x07", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Fatalf("output contains raw %q:\n%s", bad, got)
		}
	}
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 rows, got %d:\n%s", len(lines), got)
	}
	if want := `s\x1b[31mred\tx\ny\u202eevil\x00`; !strings.Contains(lines[1], want) {
		t.Fatalf("row 2 = %q, want it to contain %q", lines[1], want)
	}
	if !strings.Contains(lines[2], `plain\abell`) {
		t.Fatalf("row 3 = %q", lines[2])
	}
	if cellText("openai:user@example.com") != "openai:user@example.com" {
		t.Fatal("ordinary text must pass unchanged")
	}
}

// Free text (explain, run, replay) keeps its tabs and newlines but never
// passes a terminal escape, a bidi override or a zero-width character.
func TestTermWriter_EscapesTerminalControls(t *testing.T) {
	var out bytes.Buffer
	w := newTermWriter(&out)
	fmt.Fprintf(w, "turn %s\tsession %s\n", "t\x1b[2J", "s\u202e\u200bx")
	got := out.String()
	want := "turn t\\x1b[2J\tsession s\\u202e\\u200bx\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A stream table prints each line as written, padded to the widest cell
// of its column so far (at least its minimum): rows stay aligned while
// their cells fit, and a wider cell widens its column from then on.
func TestStreamTable_PadsToGrowingWidths(t *testing.T) {
	var b strings.Builder
	tw := newStreamTable(&b, 3, 4)
	for _, l := range []string{"SEQ\tTYPE\tKEY\n", "1\tA\tk1\n", "22\tLONGTYPE\tk2\n", "3\tB\tk\x1b3\n"} {
		if _, err := tw.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	want := "SEQ  TYPE  KEY\n" +
		"1    A     k1\n" +
		"22   LONGTYPE  k2\n" +
		"3    B         k\\x1b3\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
