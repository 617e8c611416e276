package events_test

import (
	"context"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A stream created with WithFirstSeq (a fresh stream continuing an
// archived one's sequences): empty, its last sequence is 0 and it has no
// first id; its first commit is stored at the first sequence and is the
// ledger's first id; Read and Follow from the beginning yield the commits
// with no gap before them; StreamSize counts its two messages; reopened, the stream is refused when another
// first sequence is asked for, and accepted with its own or none.
func TestFirstSeq_FreshStreamContinuesSequences(t *testing.T) {
	ctx := testutil.Context(t)
	dir := t.TempDir()
	st, err := events.Open(ctx, events.WithDataDir(dir), events.WithFirstSeq(1001))
	testutil.NoError(t, err)
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	empty, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if last != 0 || empty.LastSeq != 0 || empty.FirstID != "" || empty.FirstSeq != 1001 {
		t.Fatalf("empty stream: last %d, ledger %+v; want 0, no first id, first sequence 1001", last, empty)
	}
	first := failure("turn-1", 1)
	r1, err := st.Append(ctx, profileSubj, 0, first...)
	testutil.NoError(t, err)
	r2, err := st.Append(ctx, profileSubj, r1.Seq, failure("turn-1", 2)...)
	testutil.NoError(t, err)
	testutil.NoError(t, st.Close())

	_, err = events.Open(ctx, events.WithDataDir(dir), events.WithFirstSeq(5))
	testutil.ErrorIs(t, err, events.ErrStreamConfig)
	if !strings.Contains(err.Error(), "first sequence 1001 (want 5") {
		t.Fatalf("reopened asking first sequence 5: %v, want naming 1001 and 5", err)
	}
	st, err = events.Open(ctx, events.WithDataDir(dir), events.WithFirstSeq(1001))
	testutil.NoError(t, err)
	testutil.NoError(t, st.Close())
	st, err = events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer st.Close()
	l, err := st.Ledger(ctx)
	testutil.NoError(t, err)
	if r1.Seq != 1001 || r2.Seq != 1002 || l.FirstID != first[0].ID || l.LastSeq != 1002 || l.FirstSeq != 1001 {
		t.Fatalf("appended at %d, %d; ledger %+v; want 1001, 1002, first id %s, first sequence 1001", r1.Seq, r2.Seq, l, first[0].ID)
	}
	if msgs, bytes, err := events.StreamSize(ctx, st); err != nil || msgs != 2 || bytes < 1000 {
		t.Fatalf("stream size: %d messages, %d bytes, %v; want 2 messages of their stored size", msgs, bytes, err)
	}
	var read []uint64
	for ev, err := range st.Read(ctx, 0) {
		testutil.NoError(t, err)
		read = append(read, ev.Seq)
	}
	var followed []uint64
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for c, err := range st.Follow(fctx, events.FollowOptions{}) {
		testutil.NoError(t, err)
		if c.Err != nil {
			t.Fatalf("seq %d: %v", c.Seq, c.Err)
		}
		followed = append(followed, c.Seq)
		if c.Seq == 1002 {
			break
		}
	}
	want := []uint64{1001, 1001, 1002, 1002} // two events a commit
	if len(read) != len(want) || read[0] != want[0] || read[3] != want[3] || len(followed) != 2 || followed[0] != 1001 || followed[1] != 1002 {
		t.Fatalf("read %v, followed %v; want %v and [1001 1002]", read, followed, want)
	}
	// The ordered-consumer read of a range (rebuilds) sees no gap before
	// the first sequence either.
	var ranged []uint64
	for ev, err := range st.(interface {
		ReadRange(context.Context, uint64, uint64) iter.Seq2[events.Event, error]
	}).ReadRange(ctx, 1, 0) {
		testutil.NoError(t, err)
		ranged = append(ranged, ev.Seq)
	}
	if !slices.Equal(ranged, want) {
		t.Fatalf("ReadRange from 1: %v, want %v", ranged, want)
	}
}

// TestFirstSeq_AboveExactIntRefused: a first sequence past 2^53-1, or
// leaving less than 2^50 sequences below it (the stream would grow past
// it), is refused before anything is created, naming the limit; the
// largest accepted one creates the stream.
func TestFirstSeq_AboveExactIntRefused(t *testing.T) {
	for _, tc := range []struct {
		first uint64
		want  string
	}{
		{events.MaxExactInt + 1, "events: first sequence 9007199254740992 is above 9007199254740991, the largest a JSON reader holds exactly"},
		{9007199254740990, "events: first sequence 9007199254740990 is 1 below 9007199254740991, the largest a JSON reader holds exactly: the stream would grow past it (want at most 7881299347898367, leaving 2^50: a stream continuing an archived one starts at the archive's last sequence + 1)"},
		{events.MaxFirstSeq + 1, "events: first sequence 7881299347898368 is 1125899906842623 below 9007199254740991, the largest a JSON reader holds exactly: the stream would grow past it (want at most 7881299347898367, leaving 2^50: a stream continuing an archived one starts at the archive's last sequence + 1)"},
		{events.MaxFirstSeq, ""},
	} {
		dir := t.TempDir()
		st, err := events.Open(context.Background(), events.WithDataDir(dir), events.WithFirstSeq(tc.first))
		if tc.want == "" {
			testutil.NoError(t, err)
			testutil.NoError(t, st.Close())
			continue
		}
		if err == nil || err.Error() != tc.want {
			t.Fatalf("open with first sequence %d: %v, want %q", tc.first, err, tc.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("first sequence %d: refused, but %d entries created in the data directory", tc.first, len(ents))
		}
	}
}

// Watch on a stream continuing an archived one (WithFirstSeq 1001) from
// before its first sequence starts at the first sequence and reports no
// gap (the sequences before it are the archive's), as Read, ReadRange and
// Follow do; from inside the stream it starts there, and a watch sees a
// commit appended while it waits.
func TestFirstSeq_WatchStartsAtTheFirstSequence(t *testing.T) {
	ctx := testutil.Context(t)
	st := testutil.Store(t, events.WithFirstSeq(1001))
	r1, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	r2, err := st.Append(ctx, profileSubj, r1.Seq, failure("turn-1", 2)...)
	testutil.NoError(t, err)
	for _, tc := range []struct {
		from uint64
		want []uint64 // the commits' sequences, one per event
	}{
		{0, []uint64{1001, 1001, 1002, 1002, 1003, 1003}},
		{1, []uint64{1001, 1001, 1002, 1002, 1003, 1003}},
		{1000, []uint64{1001, 1001, 1002, 1002, 1003, 1003}},
		{1002, []uint64{1002, 1002, 1003, 1003}},
	} {
		t.Run(strconv.FormatUint(tc.from, 10), func(t *testing.T) {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var got []uint64
			for ev, err := range st.Watch(wctx, tc.from) {
				if err != nil {
					t.Fatalf("after %v: %v", got, err)
				}
				got = append(got, ev.Seq)
				if len(got) == 4 && tc.from < 1002 || len(got) == 2 && tc.from == 1002 {
					if last, _ := st.LastSeq(ctx, ""); last == r2.Seq {
						// The watch is at the stream's end: one more commit.
						_, err := st.Append(ctx, profileSubj, events.AnySeq, failure("turn-1", 3)...)
						testutil.NoError(t, err)
					}
				}
				if len(got) == len(tc.want) {
					break
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("watch from %d: %v, want %v", tc.from, got, tc.want)
			}
		})
	}
}

// A stream that exists with another first sequence than --first-seq asks
// for is refused with the fix that applies: on a server by URL, remove
// the stream (`nats stream rm`); on an embedded server there is no server
// to run that against: move the data directory away or use a fresh one.
func TestFirstSeq_MismatchNamesTheFix(t *testing.T) {
	ctx := testutil.Context(t)
	st, dir := testutil.OpenStore(t, events.WithListen(0))
	url := st.ClientURL()
	for _, tc := range []struct {
		name string
		opts []events.Option
		want string
	}{
		{"by URL", []events.Option{events.WithURL(url), events.WithListenerCredentials(dir, events.ReadWrite)},
			"events: incompatible stream config: stream FLEDGER exists with first sequence 1 (want 275: a stream continuing an archived one must be created with it; one created empty by another start can be removed, `nats stream rm FLEDGER`); fledger will not change it — fix it with the nats CLI or use another server/data directory"},
		{"embedded", []events.Option{events.WithDataDir(dir)},
			"events: incompatible stream config: stream FLEDGER exists with first sequence 1 (want 275: a stream continuing an archived one must be created with it; this data directory already holds a stream, created by an earlier start: move " + dir + " away (mv " + dir + " " + dir + ".old: it may hold the archived period) or use a fresh --data, then start again with --first-seq); fledger will not change it — fix it with the nats CLI or use another data directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "embedded" {
				testutil.NoError(t, st.Close()) // frees the directory; the URL case ran first
			}
			_, err := events.Open(ctx, append(tc.opts, events.WithFirstSeq(275))...)
			testutil.ErrorIs(t, err, events.ErrStreamConfig)
			if err.Error() != tc.want {
				t.Fatalf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}
