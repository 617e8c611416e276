package termtext

import (
	"fmt"
	"testing"
)

type ref struct{ p, m string }

func (r ref) String() string { return r.p + "/" + r.m }

func TestLineAndText(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"openai:user@example.com", "openai:user@example.com", "openai:user@example.com"},
		{"x\nFAKE LINE", `x\nFAKE LINE`, "x\nFAKE LINE"},
		{"a\tb", `a\tb`, "a\tb"},
		{"red\x1b[31m\r", `red\x1b[31m\r`, `red\x1b[31m\r`},
		{"s\u202eevil\u200b", `s\u202eevil\u200b`, `s\u202eevil\u200b`},
		{"bad\xff", `bad\xff`, `bad\xff`},
		{"ümlaut ☃", "ümlaut ☃", "ümlaut ☃"},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// Args makes strings and Stringers one line and leaves other values.
func TestArgs(t *testing.T) {
	got := fmt.Sprintf("%s %d %s %-6s|\n", Args([]any{"by x\ny", 7, ref{"a\x1b", "m"}, "ok"})...)
	if want := "by x\\ny 7 a\\x1b/m ok    |\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
