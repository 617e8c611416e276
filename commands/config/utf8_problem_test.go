package config

import "testing"

func TestUTF8Problem(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"agents: {}\n", ""},
		{"agents:\n  é: 1\n", ""},
		{"a: 1\nb: \xff\n", "not valid YAML or JSON: line 2 (byte 9): 0xff is not UTF-8 text (a binary file, or one saved in another encoding?)"},
		{"\xff\xfea\x00:\x00 \x001\x00", ""}, // UTF-16 with its byte order mark: the reader's
		{"\xc3", "not valid YAML or JSON: line 1 (byte 1): 0xc3 is not UTF-8 text (a binary file, or one saved in another encoding?)"},
	} {
		if got := utf8Problem([]byte(tc.in)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}
