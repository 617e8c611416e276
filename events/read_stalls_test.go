package events_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A read whose consumer stalls is counted (events.ReadStalls, the
// fledger_store_read_stalls_total counter) and logged, one line for a
// burst of them; a read that does not stall is not counted.
func TestReadStalls_CountedAndLogged(t *testing.T) {
	var logs bytes.Buffer
	st, _ := testutil.OpenStore(t, events.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := testutil.Context(t)
	for i := 1; i <= 3; i++ {
		_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, fmt.Sprintf("t-%d", i)), 0, failure(fmt.Sprintf("t-%d", i), 1)...)
		testutil.NoError(t, err)
	}
	read := func() int {
		n := 0
		for _, err := range readRange(st)(ctx, 1, 0) {
			testutil.NoError(t, err)
			n++
		}
		return n
	}
	if n := read(); n != 6 || events.ReadStalls(st) != 0 {
		t.Fatalf("a read without a stall: %d events, %d stalls; want 6 and 0", n, events.ReadStalls(st))
	}
	events.StallFirstMessage(t)
	stallReads(t, st, 3, func() {
		if n := read(); n != 6 {
			t.Fatalf("a stalled read yielded %d events, want 6", n)
		}
	})
	if got := events.ReadStalls(st); got != 3 {
		t.Fatalf("ReadStalls = %d after three stalled reads, want 3", got)
	}
	lines := strings.Count(logs.String(), "ordered read's consumer delivered nothing")
	if lines != 1 || !strings.Contains(logs.String(), "from_seq=1 stalled_reads=1 stalled_reads_total=1") {
		t.Fatalf("want one log line for the first stall (the next within 10 s are summed in the next line), got %d:\n%s", lines, logs.String())
	}
}

// The stalls a line did not report are logged once the spacing has
// passed, without waiting for another stall, and those still unreported
// when the store closes are logged then.
func TestReadStalls_BurstTailLogged(t *testing.T) {
	events.SpaceReadStallLines(t, 2*time.Second)
	logs := &testutil.Buffer{}
	st, _ := testutil.OpenStore(t, events.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, "t-1"), 0, failure("t-1", 1)...)
	testutil.NoError(t, err)
	events.StallFirstMessage(t)
	read := func() {
		for _, err := range readRange(st)(ctx, 1, 0) {
			testutil.NoError(t, err)
		}
	}
	stallReads(t, st, 3, read)
	lines := func() []string {
		var l []string
		for _, s := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if strings.Contains(s, "consumer delivered nothing") {
				l = append(l, s[strings.Index(s, "from_seq="):])
			}
		}
		return l
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(lines()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	want := []string{"from_seq=1 stalled_reads=1 stalled_reads_total=1", "from_seq=1 stalled_reads=2 stalled_reads_total=3"}
	if got := lines(); !slices.Equal(got, want) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	stallReads(t, st, 1, read) // within the spacing of the last line: due when the store closes
	testutil.NoError(t, st.Close())
	want = append(want, "from_seq=1 stalled_reads=1 stalled_reads_total=4")
	if got := lines(); !slices.Equal(got, want) {
		t.Fatalf("after Close: lines %q, want %q", got, want)
	}
}

// stallReads reads with read until n more of st's reads stalled. A read's
// stall is a race its first message may win even with StallFirstMessage
// (the message can arrive before the guard's timer fires), so a read is
// not always one stall; 20 reads a stall at most.
func stallReads(t *testing.T, st events.Store, n uint64, read func()) {
	t.Helper()
	want := events.ReadStalls(st) + n
	for i := uint64(0); events.ReadStalls(st) < want; i++ {
		if i == 20*n {
			t.Fatalf("%d reads stalled %d times, want %d", i, n-(want-events.ReadStalls(st)), n)
		}
		read()
	}
}
