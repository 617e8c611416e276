package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// appendTurns stores n one-commit turns t-1..t-n on st.
func appendTurns(t *testing.T, st events.Store, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		id := fmt.Sprint("t-", i)
		_, err := st.Append(testutil.Context(t), events.MustSubject("main", events.AggTurn, id), 0, failure(id, 1)[0])
		testutil.NoError(t, err)
	}
}

// fetchSeqs fetches up to n commits from c (waiting up to 10 s for the
// first) and returns them and their sequences.
func fetchSeqs(t *testing.T, c events.Cursor, n int) ([]events.Delivery, []uint64) {
	t.Helper()
	ds, err := c.Fetch(testutil.Context(t), n, 10*time.Second)
	testutil.NoError(t, err)
	seqs := make([]uint64, len(ds))
	for i, d := range ds {
		seqs[i] = d.Seq
	}
	return ds, seqs
}

func ackAll(t *testing.T, ds []events.Delivery) {
	t.Helper()
	for _, d := range ds {
		testutil.NoError(t, d.Ack(testutil.Context(t)))
	}
}

// A cursor delivers commits in order from Since, decoded with their
// subjects; what was acknowledged is not delivered again when the cursor
// is opened again, on a restarted server too.
func TestCursor_ResumesAfterReopen(t *testing.T) {
	st, dir := testutil.OpenStore(t)
	appendTurns(t, st, 5)
	ctx := testutil.Context(t)
	for _, tc := range []struct {
		name  string
		since uint64
		want  string
	}{
		{"from the beginning", 0, "[1 2 3]"},
		{"from sequence 4", 4, "[4 5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := st.Cursor(ctx, events.CursorOptions{Name: fmt.Sprint("since-", tc.since), Since: tc.since, Batch: 10})
			testutil.NoError(t, err)
			ds, seqs := fetchSeqs(t, c, 3)
			if fmt.Sprint(seqs) != tc.want {
				t.Fatalf("delivered %v, want %s", seqs, tc.want)
			}
			for _, d := range ds {
				if d.Err != nil || len(d.Events) != 1 || d.Subject != events.MustSubject("main", events.AggTurn, fmt.Sprint("t-", d.Seq)) {
					t.Fatalf("delivery %+v", d.StoredCommit)
				}
			}
			ackAll(t, ds)
			testutil.NoError(t, c.Close())
		})
	}
	testutil.NoError(t, st.Close())

	st2, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer st2.Close()
	c, err := st2.Cursor(ctx, events.CursorOptions{Name: "since-0", Batch: 10})
	testutil.NoError(t, err)
	defer c.Close()
	ds, seqs := fetchSeqs(t, c, 10)
	if fmt.Sprint(seqs) != "[4 5]" {
		t.Fatalf("reopened cursor delivered %v, want [4 5]", seqs)
	}
	ackAll(t, ds)
	if ds, err := c.Fetch(ctx, 10, 200*time.Millisecond); err != nil || len(ds) != 0 {
		t.Fatalf("after everything was acknowledged: %d deliveries, %v", len(ds), err)
	}
}

// A commit handed back (Nak) or left unacknowledged past AckWait is
// delivered again.
func TestCursor_Redelivery(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	appendTurns(t, st, 1)
	for _, tc := range []struct {
		name, cursor string
		handle       func(d events.Delivery) error
	}{
		{"nak", "redeliver-nak", func(d events.Delivery) error { return d.Nak() }},
		{"ack wait passed", "redeliver-unacked", func(events.Delivery) error { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := st.Cursor(testutil.Context(t), events.CursorOptions{Name: tc.cursor, AckWait: 300 * time.Millisecond})
			testutil.NoError(t, err)
			defer c.Close()
			ds, seqs := fetchSeqs(t, c, 1)
			if fmt.Sprint(seqs) != "[1]" {
				t.Fatalf("delivered %v", seqs)
			}
			testutil.NoError(t, tc.handle(ds[0]))
			ds, seqs = fetchSeqs(t, c, 1)
			if fmt.Sprint(seqs) != "[1]" {
				t.Fatalf("redelivered %v, want [1]", seqs)
			}
			ackAll(t, ds)
		})
	}
}
