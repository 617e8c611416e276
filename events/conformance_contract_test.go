package events_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// The cases of the new contract: Follow, Cursor and Ledger.

// committed is a commit a case appended: its subject and the events sent.
type committed struct {
	subject string
	events  []events.Event
}

// appendMixed stores three commits with no expectation: one on the
// profile, a two-event one on a turn, one on the profile again.
func (e env) appendMixed(t testing.TB) []committed {
	t.Helper()
	turn := e.subj(events.AggTurn, "t1")
	out := []committed{
		{e.profile(), []events.Event{e.cleared(profileID, "1")}},
		{turn, e.failure("t1")},
		{e.profile(), []events.Event{e.cleared(profileID, "2")}},
	}
	for _, c := range out {
		_, err := e.s.Append(testutil.Context(t), c.subject, events.AnySeq, c.events...)
		testutil.NoError(t, err)
	}
	return out
}

// wantCommit checks a commit as a follower or cursor sees it: at seq,
// under want's subject, decoded into want's events (nil events: not
// decoded).
func wantCommit(t testing.TB, got events.StoredCommit, seq uint64, want committed) {
	t.Helper()
	if got.Seq != seq || got.Subject != want.subject || got.Err != nil || len(got.Events) != len(want.events) {
		t.Fatalf("commit at seq %d subject %s with %d events (err %v), want seq %d subject %s with %d events",
			got.Seq, got.Subject, len(got.Events), got.Err, seq, want.subject, len(want.events))
	}
	for i := range want.events {
		sameEvent(t, got.Events[i], want.events[i], seq, i, 0)
	}
}

func confFollow(t *testing.T, e env) {
	ctx := testutil.Context(t)
	want := e.appendMixed(t)
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := iterate(e.s.Follow(fctx, events.FollowOptions{From: e.seq(1)}))
	// Every stored commit from From, in order, then the new ones as
	// they are stored.
	for k, w := range want {
		wantCommit(t, f.next(t, fmt.Sprint("stored commit ", k+1)), e.seq(k+1), w)
	}
	later := committed{e.subj(events.AggTurn, "t2"), e.failure("t2")}
	_, err := e.s.Append(ctx, later.subject, 0, later.events...)
	testutil.NoError(t, err)
	wantCommit(t, f.next(t, "the new commit"), e.seq(4), later)
	// Cancelling the context ends it, without an error.
	cancel()
	f.wantEnd(t, nil)
	// From 0 is the stream's first sequence; the caller may stop.
	n := 0
	for c, err := range e.s.Follow(ctx, events.FollowOptions{}) {
		testutil.NoError(t, err)
		if c.Seq != 1 {
			t.Fatalf("Follow from 0 began at seq %d", c.Seq)
		}
		if n++; n == 1 {
			break
		}
	}
}

// confFollowDecode: a commit whose subject Decode does not select is
// yielded with its sequence and subject, and no events; so is one Skip
// names.
func confFollowDecode(t *testing.T, e env) {
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	want := e.appendMixed(t)
	profiles := func(subject string) bool { return subject == e.profile() }
	f := iterate(e.s.Follow(ctx, events.FollowOptions{From: e.seq(1), Decode: profiles}))
	wantCommit(t, f.next(t, "the 1st commit"), e.seq(1), want[0])
	wantCommit(t, f.next(t, "the turn's commit"), e.seq(2), committed{subject: want[1].subject})
	wantCommit(t, f.next(t, "the 3rd commit"), e.seq(3), want[2])
	cancel()
	f.wantEnd(t, nil)

	// Skip leaves a selected commit undecoded too.
	ctx, cancel = context.WithCancel(testutil.Context(t))
	defer cancel()
	first := func(seq uint64) bool { return seq == e.seq(1) }
	f = iterate(e.s.Follow(ctx, events.FollowOptions{From: e.seq(1), Decode: profiles, Skip: first}))
	wantCommit(t, f.next(t, "the skipped 1st commit"), e.seq(1), committed{subject: want[0].subject})
	wantCommit(t, f.next(t, "the turn's commit"), e.seq(2), committed{subject: want[1].subject})
	wantCommit(t, f.next(t, "the 3rd commit"), e.seq(3), want[2])
	cancel()
	f.wantEnd(t, nil)
}

// shortWait is how long a fetch that must find nothing waits.
const shortWait = 200 * time.Millisecond

// cursor opens the case's cursor named suffix (Since the case's first
// commit unless opts say otherwise), closed when t ends.
func (e env) cursor(t testing.TB, suffix string, opts events.CursorOptions) events.Cursor {
	t.Helper()
	opts.Name = e.agent + "-" + suffix
	if opts.Since == 0 {
		opts.Since = e.seq(1)
	}
	c, err := e.s.Cursor(testutil.Context(t), opts)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// fetch fetches up to n commits and checks their sequences are seqs.
// Fetch takes the messages already waiting behind the first one, and a
// message a replaced reader handed back (a nak) may not be waiting yet,
// so fetch asks again, for the rest of n, until it has len(seqs)
// deliveries or a fetch waited hangLimit for none. n of 0 waits
// shortWait once and must find none.
func fetch(t testing.TB, c events.Cursor, n int, seqs ...uint64) []events.Delivery {
	t.Helper()
	if n == 0 {
		ds, err := c.Fetch(testutil.Context(t), 1, shortWait)
		testutil.NoError(t, err)
		wantSeqs(t, ds, seqs)
		return ds
	}
	if len(seqs) == 0 {
		t.Fatal("fetch: give the sequences expected, or n 0 to expect none")
	}
	var ds []events.Delivery
	for len(ds) < len(seqs) && len(ds) < n {
		more, err := c.Fetch(testutil.Context(t), n-len(ds), hangLimit)
		testutil.NoError(t, err)
		if len(more) == 0 {
			break
		}
		ds = append(ds, more...)
	}
	wantSeqs(t, ds, seqs)
	return ds
}

// wantSeqs fails unless ds are the deliveries of seqs, in order.
func wantSeqs(t testing.TB, ds []events.Delivery, seqs []uint64) {
	t.Helper()
	got := make([]uint64, len(ds))
	for i, d := range ds {
		got[i] = d.Seq
	}
	if fmt.Sprint(got) != fmt.Sprint(seqs) {
		t.Fatalf("fetched sequences %v, want %v", got, seqs)
	}
}

// ack acknowledges every delivery.
func ack(t testing.TB, ds ...events.Delivery) {
	t.Helper()
	for _, d := range ds {
		testutil.NoError(t, d.Ack(testutil.Context(t)))
	}
}

func confCursorAck(t *testing.T, e env) {
	want := e.appendMixed(t)
	c := e.cursor(t, "ack", events.CursorOptions{})
	ds := fetch(t, c, 3, e.seq(1), e.seq(2), e.seq(3))
	for k, d := range ds {
		wantCommit(t, d.StoredCommit, e.seq(k+1), want[k])
	}
	ack(t, ds...)
	// Acknowledged commits are not delivered again; new ones are.
	fetch(t, c, 0)
	appendN(t, e, e.profile(), profileID, 1)
	ack(t, fetch(t, c, 1, e.seq(4))...)
	fetch(t, c, 0)
}

func confCursorResume(t *testing.T, e env) {
	e.appendMixed(t)
	c := e.cursor(t, "resume", events.CursorOptions{})
	ack(t, fetch(t, c, 2, e.seq(1), e.seq(2))...)
	testutil.NoError(t, c.Close())
	// Opened again by name, it resumes after what was acknowledged
	// (Since is for a new cursor only).
	c = e.cursor(t, "resume", events.CursorOptions{Since: e.seq(2)})
	ack(t, fetch(t, c, 1, e.seq(3))...)
	// Another name is another cursor, starting at its Since.
	ack(t, fetch(t, e.cursor(t, "other", events.CursorOptions{Since: e.seq(2)}), 2, e.seq(2), e.seq(3))...)
}

func confCursorNak(t *testing.T, e env) {
	e.appendMixed(t)
	c := e.cursor(t, "nak", events.CursorOptions{})
	ds := fetch(t, c, 3, e.seq(1), e.seq(2), e.seq(3))
	testutil.NoError(t, ds[1].Nak())
	ack(t, ds[0], ds[2])
	appendN(t, e, e.profile(), profileID, 1)
	// The commit handed back comes first, before the new one. A fetch
	// takes what is already waiting behind the first delivery; on a
	// cluster the new commit may not have reached the consumer's leader
	// yet, so it can come with the next fetch.
	ack(t, fetchInOrder(t, c, e.seq(2), e.seq(4))...)
	fetch(t, c, 0)
}

// fetchInOrder fetches until seqs have been delivered, in that order,
// within hangLimit.
func fetchInOrder(t testing.TB, c events.Cursor, seqs ...uint64) []events.Delivery {
	t.Helper()
	var out []events.Delivery
	deadline := time.Now().Add(hangLimit)
	for len(out) < len(seqs) && time.Now().Before(deadline) {
		ds, err := c.Fetch(testutil.Context(t), len(seqs)-len(out), time.Until(deadline))
		testutil.NoError(t, err)
		out = append(out, ds...)
	}
	wantSeqs(t, out, seqs)
	return out
}

func confCursorBatch(t *testing.T, e env) {
	e.appendMixed(t)
	appendN(t, e, e.profile(), profileID, 1)
	c := e.cursor(t, "batch", events.CursorOptions{Batch: 2})
	ds := fetch(t, c, 2, e.seq(1), e.seq(2))
	// Two unacknowledged: nothing more until one is acknowledged.
	fetch(t, c, 0)
	ack(t, ds[0])
	ds = append(ds[1:], fetch(t, c, 1, e.seq(3))...)
	fetch(t, c, 0)
	ack(t, ds...)
	ack(t, fetch(t, c, 1, e.seq(4))...)
}

func confCursorAckWait(t *testing.T, e env) {
	appendN(t, e, e.profile(), profileID, 1)
	c := e.cursor(t, "ackwait", events.CursorOptions{AckWait: time.Second})
	fetch(t, c, 1, e.seq(1))
	// Not acknowledged within AckWait (the reader died): delivered again.
	d := fetch(t, c, 1, e.seq(1))[0]
	testutil.NoError(t, d.InProgress())
	ack(t, d)
	fetch(t, c, 0)
}

// wantLedger checks the fingerprint's fixed parts.
func wantLedger(t testing.TB, l events.Ledger, last uint64) {
	t.Helper()
	if l.Stream != events.StreamName || l.Created.IsZero() || l.Created.Location() != time.UTC || l.LastSeq != last || l.FirstSeq != 1 {
		t.Fatalf("ledger %+v, want stream %s, a UTC creation time, last sequence %d, first sequence 1", l, events.StreamName, last)
	}
}

func confLedgerEmpty(t *testing.T, e env) {
	if e.base != 0 {
		t.Fatalf("the first case's stream has %d messages", e.base)
	}
	l, err := e.s.Ledger(testutil.Context(t))
	testutil.NoError(t, err)
	wantLedger(t, l, 0)
	if l.FirstID != "" {
		t.Fatalf("empty stream's first id %q", l.FirstID)
	}
	again, err := e.s.Ledger(testutil.Context(t))
	testutil.NoError(t, err)
	if again != l {
		t.Fatalf("ledger %+v, then %+v", l, again)
	}
}

func confLedger(t *testing.T, e env) {
	ctx := testutil.Context(t)
	before, err := e.s.Ledger(ctx)
	testutil.NoError(t, err)
	wantLedger(t, before, e.base)
	stored := appendN(t, e, e.profile(), profileID, 2)
	l, err := e.s.Ledger(ctx)
	testutil.NoError(t, err)
	wantLedger(t, l, e.seq(2))
	// The fingerprint does not move; the first id is the message id at
	// sequence 1 (this case's first commit on a fresh stream).
	if !l.Created.Equal(before.Created) || !l.Same(before) || !before.Same(l) {
		t.Fatalf("ledger %v, then %v", before, l)
	}
	first := e.rawMsg(t, 1).Header.Get(jetstream.MsgIDHeader)
	if l.FirstID != first || e.base == 0 && (first != stored[0].ID || before.FirstID != "") || e.base > 0 && before.FirstID != first {
		t.Fatalf("first id %q (before the appends %q), want %q", l.FirstID, before.FirstID, first)
	}
}

// confClosed: Close ends a follower with ErrClosed, is idempotent, and
// every later call returns ErrClosed.
func confClosed(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	appendN(t, e, e.profile(), profileID, 1)
	f := iterate(s.Follow(ctx, events.FollowOptions{From: e.seq(1)}))
	f.next(t, "the stored commit")
	testutil.NoError(t, s.Close())
	testutil.NoError(t, s.Close())
	f.wantEnd(t, events.ErrClosed)
	calls := []struct {
		name string
		call func() error
	}{
		{"Append", func() error {
			_, err := s.Append(ctx, e.profile(), events.AnySeq, e.cleared(profileID, "x"))
			return err
		}},
		{"ReadSubject", func() error { _, _, err := s.ReadSubject(ctx, e.profile()); return err }},
		{"Read", func() error { return firstErr(s.Read(ctx, 1)) }},
		{"Watch", func() error { return firstErr(s.Watch(ctx, 1)) }},
		{"LastSeq", func() error { _, err := s.LastSeq(ctx, ""); return err }},
		{"Follow", func() error { return firstErr(s.Follow(ctx, events.FollowOptions{})) }},
		{"Cursor", func() error { _, err := s.Cursor(ctx, events.CursorOptions{Name: e.agent}); return err }},
		{"Ledger", func() error { _, err := s.Ledger(ctx); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, events.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", c.name, err)
		}
	}
}

// firstErr is the first error an iteration yields (nil when it ends
// without one).
func firstErr[T any](seq func(yield func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// confCursorOptions: a missing or malformed name, negative settings and a
// fetch of no commits are refused (ErrInvalidOption) before anything is
// made; a closed cursor refuses to fetch (ErrClosed).
func confCursorOptions(t *testing.T, e env) {
	s := e.s
	for _, o := range []events.CursorOptions{
		{},
		{Name: "has space"},
		{Name: "dotted.name"},
		{Name: "ok", Batch: -1},
		{Name: "ok", AckWait: -time.Second},
	} {
		_, err := s.Cursor(testutil.Context(t), o)
		testutil.ErrorIs(t, err, events.ErrInvalidOption)
	}
	c, err := s.Cursor(testutil.Context(t), events.CursorOptions{Name: e.agent + "-Exporter_1-a"})
	testutil.NoError(t, err)
	_, err = c.Fetch(testutil.Context(t), 0, time.Millisecond)
	testutil.ErrorIs(t, err, events.ErrInvalidOption)
	testutil.NoError(t, c.Close())
	_, err = c.Fetch(testutil.Context(t), 1, time.Millisecond)
	testutil.ErrorIs(t, err, events.ErrClosed)
}
