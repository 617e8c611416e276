package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
)

// followWarnings names the first 5 of each kind as they come, then counts
// the rest and sums them up at each flush (only what came since the last
// one; nothing when nothing came), for foreign messages and gaps alike.
func TestFollowWarnings_NameFiveThenSumUp(t *testing.T) {
	bad := func(seq uint64) *events.DecodeError {
		return &events.DecodeError{Seq: seq, Index: -1, Subject: "fledger.x.turn.junk", Size: 3, Err: errors.New("not JSON")}
	}
	gap := func(seq, through uint64) *events.DecodeError {
		return &events.DecodeError{Seq: seq, Through: through, Index: -1, Err: events.ErrGap}
	}
	named := func(seq uint64) string {
		return fmt.Sprintf("fledger export: warning: seq %d (subject fledger.x.turn.junk, 3 bytes) is not a fledger commit, quarantined and skipped: %s", seq, bad(seq).Reason())
	}
	const further = "fledger export: warning: further messages that are not fledger commits are counted and summed up every 1m0s (fledger events --json lists every one)"
	// step: a DecodeError to add, or nil to flush.
	for _, tc := range []struct {
		name  string
		steps []*events.DecodeError
		want  []string
	}{
		{"none: no line", []*events.DecodeError{nil}, nil},
		{"five: each named, nothing summed up", []*events.DecodeError{bad(1), bad(2), bad(3), bad(4), bad(5), nil},
			[]string{named(1), named(2), named(3), named(4), named(5), further}},
		{"the sixth is counted: one more, singular", []*events.DecodeError{bad(1), bad(2), bad(3), bad(4), bad(5), bad(9), nil, nil},
			[]string{named(1), named(2), named(3), named(4), named(5), further,
				"fledger export: warning: 1 more stored message is not a fledger commit, quarantined and skipped: seq 9 to 9"}},
		{"each flush sums up what came since the last one", []*events.DecodeError{bad(1), bad(2), bad(3), bad(4), bad(5), bad(6), bad(7), nil, bad(40), bad(41), bad(50), nil},
			[]string{named(1), named(2), named(3), named(4), named(5), further,
				"fledger export: warning: 2 more stored messages are not fledger commits, quarantined and skipped: seq 6 to 7",
				"fledger export: warning: 3 more stored messages are not fledger commits, quarantined and skipped: seq 40 to 50"}},
		{"gaps are counted apart, in sequences and runs", []*events.DecodeError{gap(2, 3), gap(5, 5), gap(7, 8), gap(10, 10), gap(12, 12), bad(13), gap(20, 29), gap(31, 31), nil},
			[]string{
				"fledger export: warning: sequences 2, 3 missing from the stream (it denies deletes: damaged storage?)",
				"fledger export: warning: sequence 5 missing from the stream (it denies deletes: damaged storage?)",
				"fledger export: warning: sequences 7, 8 missing from the stream (it denies deletes: damaged storage?)",
				"fledger export: warning: sequence 10 missing from the stream (it denies deletes: damaged storage?)",
				"fledger export: warning: sequence 12 missing from the stream (it denies deletes: damaged storage?)",
				"fledger export: warning: further missing sequences are counted and summed up every 1m0s (fledger events --json lists every one)",
				named(13),
				"fledger export: warning: 11 more sequences are missing from the stream (2 runs; damaged storage?): seq 20 to 31"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := newFollowWarnings(&b, "export")
			for _, de := range tc.steps {
				if de == nil {
					w.flush()
				} else {
					w.add(de)
				}
			}
			if got := lines(b.String()); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
