package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// The state as of a time stops before the first commit stamped after it;
// commits after that one stamped at or before the time (writers whose
// clocks disagree) are counted, and a warning names them — the state is
// still an exact prefix of the stream.
func TestMomentAt_NamesTheCommitsLeftOut(t *testing.T) {
	st := openStore(t)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, min := range []int{0, 1, 30, 2, 3, 31} {
		ev := events.New("main", "openai", t0.Add(time.Duration(min)*time.Minute), events.AuthOrderSet{Provider: "openai", ProfileIDs: []string{"openai:a"}, By: "cli"})
		_, err := st.Append(context.Background(), events.MustSubject("main", events.AggOrder, "openai"), events.AnySeq, ev)
		testutil.NoError(t, err)
	}
	for _, c := range []struct {
		at      time.Time
		want    replay.Moment
		warning string
	}{
		{t0.Add(5 * time.Minute), replay.Moment{Seq: 2, StopSeq: 3, StopAt: t0.Add(30 * time.Minute), Read: 3, LeftOut: 2, LastLeftOut: 5},
			"--at 2026-03-02T09:05:00Z: the state ends at sequence 2, before sequence 3 stamped 2026-03-02T09:30:00Z; 2 of the 3 commits after it are stamped at or before 2026-03-02T09:05:00Z (the last at sequence 5) and left out: the writers' clocks disagree (use --to-seq for an exact cut)"},
		{t0.Add(30 * time.Minute), replay.Moment{Seq: 5, StopSeq: 6, StopAt: t0.Add(31 * time.Minute)}, ""},
		{t0.Add(time.Hour), replay.Moment{Seq: 6}, ""},
		{t0.Add(-time.Second), replay.Moment{StopSeq: 1, StopAt: t0, Read: 5}, ""},
	} {
		m, err := replay.MomentAt(context.Background(), st, c.at)
		testutil.NoError(t, err)
		if !m.StopAt.Equal(c.want.StopAt) {
			t.Fatalf("at %s: stop at %s, want %s", c.at, m.StopAt, c.want.StopAt)
		}
		m.StopAt = c.want.StopAt
		if m != c.want {
			t.Fatalf("at %s: %+v, want %+v", c.at, m, c.want)
		}
		if got := m.Warning("--at", c.at); got != c.warning {
			t.Fatalf("at %s: warning %q, want %q", c.at, got, c.warning)
		}
		seq, err := replay.SeqAt(context.Background(), st, c.at)
		testutil.NoError(t, err)
		if seq != m.Seq {
			t.Fatalf("at %s: SeqAt %d, MomentAt %d", c.at, seq, m.Seq)
		}
	}
}
