package events_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// A damaged message block (64 bytes zeroed in the middle, as in the
// issue) loses a message the stream cannot have deleted: Read, ReadRange,
// Watch and Follow name each missing sequence as a gap (a *DecodeError wrapping ErrGap)
// before the message after it, and every other message is still read.
func TestRead_DamagedBlockIsAGapNamedBySequence(t *testing.T) {
	dir := t.TempDir()
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	const n = 40
	for i := 1; i <= n; i++ {
		_, err := st.Append(ctx, events.MustSubject("main", events.AggTurn, fmt.Sprintf("t-%d", i)), 0, failure(fmt.Sprintf("t-%d", i), 1)...)
		testutil.NoError(t, err)
	}
	testutil.NoError(t, st.Close())

	blocks, _ := filepath.Glob(filepath.Join(dir, "jetstream", "*", "streams", events.StreamName, "msgs", "*.blk"))
	if len(blocks) != 1 {
		t.Fatalf("message blocks %v", blocks)
	}
	b, err := os.ReadFile(blocks[0])
	testutil.NoError(t, err)
	off := len(b) / 2
	copy(b[off:off+64], make([]byte, 64))
	testutil.NoError(t, os.WriteFile(blocks[0], b, 0o600))

	st, err = events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer st.Close()

	read := func(seq func(yield func(events.Event, error) bool), stopAt uint64) (seen map[uint64]bool, gaps [][2]uint64) {
		seen = map[uint64]bool{}
		for ev, err := range seq {
			if err != nil {
				var de *events.DecodeError
				if !errors.As(err, &de) || !errors.Is(err, events.ErrGap) || !de.Gap() {
					t.Fatalf("read error %v, want only gaps", err)
				}
				if !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), fmt.Sprint(de.Seq)) {
					t.Fatalf("gap error %q does not name sequence %d", err, de.Seq)
				}
				gaps = append(gaps, [2]uint64{de.Seq, de.Through})
				continue
			}
			seen[ev.Seq] = true
			if ev.Seq >= stopAt {
				break
			}
		}
		return seen, gaps
	}
	seen, gaps := read(st.Read(ctx, 1), n)
	if len(gaps) == 0 {
		t.Skipf("the damage lost no message on this server version (read %d of %d)", len(seen), n)
	}
	last := uint64(0)
	for s := range seen {
		last = max(last, s)
	}
	// The gaps are exactly the sequences not read, up to the last one read.
	missing := map[uint64]bool{}
	for _, g := range gaps {
		for s := g[0]; s <= g[1]; s++ {
			missing[s] = true
		}
	}
	for s := uint64(1); s <= last; s++ {
		if seen[s] == missing[s] {
			t.Fatalf("sequence %d: read %v, reported missing %v (gaps %v)", s, seen[s], missing[s], gaps)
		}
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wseen, wgaps := read(st.Watch(wctx, 1), last)
	if fmt.Sprint(wgaps) != fmt.Sprint(gaps) || len(wseen) != len(seen) {
		t.Fatalf("Watch gaps %v (%d read), Read gaps %v (%d read)", wgaps, len(wseen), gaps, len(seen))
	}
	rseen, rgaps := read(readRange(st)(ctx, 1, 0), last)
	if fmt.Sprint(rgaps) != fmt.Sprint(gaps) || len(rseen) != len(seen) {
		t.Fatalf("ReadRange gaps %v (%d read), Read gaps %v (%d read)", rgaps, len(rseen), gaps, len(seen))
	}
	fseen, fgaps := read(commitsAsEvents(st.Follow(wctx, events.FollowOptions{})), last)
	if fmt.Sprint(fgaps) != fmt.Sprint(gaps) || len(fseen) != len(seen) {
		t.Fatalf("Follow gaps %v (%d read), Read gaps %v (%d read)", fgaps, len(fseen), gaps, len(seen))
	}
}

// commitsAsEvents yields each followed commit as Read does: its first
// event, or its Err (a gap, an undecodable message).
func commitsAsEvents(seq iter.Seq2[events.StoredCommit, error]) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for c, err := range seq {
			switch {
			case err != nil:
				yield(events.Event{}, err)
				return
			case c.Err != nil:
				if !yield(events.Event{Seq: c.Seq, Index: -1}, c.Err) {
					return
				}
			case len(c.Events) > 0:
				if !yield(c.Events[0], nil) {
					return
				}
			}
		}
	}
}

// GapText names each missing sequence, and long runs by their ends.
func TestGapText(t *testing.T) {
	for _, tc := range []struct {
		from, through uint64
		want          string
	}{
		{29, 29, "sequence 29"},
		{29, 31, "sequences 29, 30, 31"},
		{1, 1000, "sequences 1–1000 (1000 sequences)"},
	} {
		if got := events.GapText(tc.from, tc.through); got != tc.want {
			t.Errorf("GapText(%d, %d) = %q, want %q", tc.from, tc.through, got, tc.want)
		}
	}
	de := &events.DecodeError{Seq: 29, Through: 29, Index: -1, Err: events.ErrGap}
	if !errors.Is(de, events.ErrDecode) || de.Error() != "events: stream sequence 29 missing (the stream denies deletes: damaged storage?)" {
		t.Fatalf("gap error %q", de)
	}
}

// A stray message is reported with its sequence, subject, size and why,
// and reading goes on.
func TestRead_StrayMessageNamesSubjectSizeAndReason(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	m, err := events.ConnOf(st).Request("fledger.main.turn.oops", []byte("hello"), 5e9)
	testutil.NoError(t, err)
	if !strings.Contains(string(m.Data), `"seq":2`) {
		t.Fatalf("publish ack %s", m.Data)
	}
	_, err = st.Append(ctx, profileSubj, 1, failure("turn-1", 2)...)
	testutil.NoError(t, err)
	var good int
	var bad []*events.DecodeError
	for _, err := range st.Read(ctx, 1) {
		var de *events.DecodeError
		if errors.As(err, &de) {
			bad = append(bad, de)
			continue
		}
		testutil.NoError(t, err)
		good++
	}
	if good != 4 || len(bad) != 1 || bad[0].Seq != 2 || bad[0].Subject != "fledger.main.turn.oops" || bad[0].Size != 5 ||
		bad[0].Gap() || bad[0].Reason() != "body: want valid JSON, found invalid character 'h' looking for beginning of value at byte 1 of 5: hello" {
		t.Fatalf("%d events, decode errors %+v", good, bad)
	}
}
