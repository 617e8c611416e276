package main

import (
	"fmt"
	"io"

	"github.com/fledger/fledger/events"
)

// archivedRangeNote tells on w, when a command was asked for stream
// sequences (from, to; 0 = not asked) before the first sequence of a
// stream that continues an archived one, that those are in the archive:
// without it such a range reads as empty ("no events", a header alone)
// where explain and replay name the archive.
func archivedRangeNote(w io.Writer, name string, l events.Ledger, from, to uint64) {
	hint := l.ArchivedHint()
	if hint == "" {
		return
	}
	if (from == 0 || from >= l.FirstSeq) && (to == 0 || to >= l.FirstSeq) {
		return
	}
	fmt.Fprintf(w, "fledger %s: note: %s\n", name, hint)
}
