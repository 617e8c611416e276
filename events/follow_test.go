package events_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// followN follows st with opts and returns the first n commits yielded.
func followN(t *testing.T, st events.Store, opts events.FollowOptions, n int) []events.StoredCommit {
	t.Helper()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	var out []events.StoredCommit
	for c, err := range st.Follow(ctx, opts) {
		testutil.NoError(t, err)
		out = append(out, c)
		if len(out) == n {
			break
		}
	}
	return out
}

// Follow yields one StoredCommit per stored message, in stream order, with
// its subject: a commit of two events whole, a stray message as a
// DecodeError naming it; Decode selects what is decoded, Skip leaves a
// commit undecoded, and From is where following starts.
func TestFollow_WholeCommitsWithSubjects(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	turnSubj := events.MustSubject("main", events.AggTurn, "turn-1")
	_, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...) // 1: two events
	testutil.NoError(t, err)
	_, err = events.ConnOf(st).Request("fledger.main.turn.oops", []byte("hello"), 5e9) // 2: stray
	testutil.NoError(t, err)
	_, err = st.Append(ctx, turnSubj, 0, failure("turn-1", 2)[0]) // 3: one event
	testutil.NoError(t, err)

	onlyTurns := func(subject string) bool { return strings.Contains(subject, ".turn.") }
	for _, tc := range []struct {
		name    string
		opts    events.FollowOptions
		seqs    []uint64
		nEvents []int // per commit; -1 = a decode error
	}{
		{"all decoded", events.FollowOptions{}, []uint64{1, 2, 3}, []int{2, -1, 1}},
		{"from 2", events.FollowOptions{From: 2}, []uint64{2, 3}, []int{-1, 1}},
		{"only turns decoded", events.FollowOptions{Decode: onlyTurns}, []uint64{1, 2, 3}, []int{0, -1, 1}},
		{"the first skipped", events.FollowOptions{Skip: func(seq uint64) bool { return seq == 1 }}, []uint64{1, 2, 3}, []int{0, -1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := followN(t, st, tc.opts, len(tc.seqs))
			for i, c := range got {
				if c.Seq != tc.seqs[i] {
					t.Fatalf("commit %d at seq %d, want %d", i, c.Seq, tc.seqs[i])
				}
				want := map[uint64]string{1: profileSubj, 2: "fledger.main.turn.oops", 3: turnSubj}[c.Seq]
				if c.Subject != want {
					t.Fatalf("seq %d subject %q, want %q", c.Seq, c.Subject, want)
				}
				if tc.nEvents[i] < 0 {
					if c.Err == nil || c.Err.Gap() || c.Err.Seq != 2 || c.Err.Subject != want || c.Err.Size != 5 || c.Events != nil {
						t.Fatalf("stray message yielded as %+v (err %v)", c, c.Err)
					}
					continue
				}
				if c.Err != nil || len(c.Events) != tc.nEvents[i] {
					t.Fatalf("seq %d: %d events (err %v), want %d", c.Seq, len(c.Events), c.Err, tc.nEvents[i])
				}
				for _, ev := range c.Events {
					if ev.Seq != c.Seq {
						t.Fatalf("event of commit %d has seq %d", c.Seq, ev.Seq)
					}
				}
			}
		})
	}
}

// A commit stored while a follower waits is yielded to it.
func TestFollow_YieldsNewCommits(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	got := make(chan events.StoredCommit, 1)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for c, err := range st.Follow(fctx, events.FollowOptions{}) {
			if err == nil {
				got <- c
			}
			return
		}
	}()
	res, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	select {
	case c := <-got:
		if c.Seq != res.Seq || len(c.Events) != 2 {
			t.Fatalf("followed %+v, want the commit at %d", c, res.Seq)
		}
	case <-ctx.Done():
		t.Fatal("the new commit was not followed")
	}
}

// Closing the store ends following with ErrClosed; a store already
// closed yields it at once.
func TestFollow_EndsWithErrClosed(t *testing.T) {
	st, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	first := make(chan uint64, 1)
	ended := make(chan error, 1)
	go func() {
		for c, err := range st.Follow(ctx, events.FollowOptions{}) {
			if err != nil {
				ended <- err
				return
			}
			first <- c.Seq
		}
		ended <- nil
	}()
	_, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	<-first
	testutil.NoError(t, st.Close())
	testutil.ErrorIs(t, <-ended, events.ErrClosed)
	yielded := false
	for _, err := range st.Follow(ctx, events.FollowOptions{}) {
		testutil.ErrorIs(t, err, events.ErrClosed)
		yielded = true
	}
	if !yielded {
		t.Fatal("follow on a closed store yielded nothing")
	}
}
