package config

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// utf8Problem names where a config file stops being UTF-8 text (a binary
// file, or one saved in another encoding): the YAML reader says only that
// it met an invalid octet, not where. A file starting with a UTF-16 byte
// order mark is left to the reader, which reads UTF-16.
func utf8Problem(data []byte) string {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return ""
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line := bytes.Count(data[:off], []byte("\n")) + 1
	return fmt.Sprintf("not valid YAML or JSON: line %d (byte %d): 0x%02x is not UTF-8 text (a binary file, or one saved in another encoding?)", line, off+1, data[off])
}
