package events_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// keepAckWait is the keep cases' AckWait: a delivery left unacknowledged
// holds the cursor that long.
const keepAckWait = 300 * time.Millisecond

// confCursorKeep: with CursorOptions.Keep the caller decides where an
// existing cursor stands. Keep is shown the acknowledged position and
// the deliveries left unacknowledged; false moves the cursor to Since
// (those deliveries dropped), true keeps it; a new cursor starts at
// Since without asking. Deliveries left unacknowledged are waited out
// (their AckWait) first: a reader that stopped with them is taken for
// dead once it is over. A cursor another reader waits on is refused
// (ErrCursorInUse, naming it), and an error of Keep comes back as is.
func confCursorKeep(t *testing.T, e env) {
	ctx := testutil.Context(t)
	e.appendMixed(t)
	name := e.agent + "-keep"
	var shown []events.CursorState
	keep := func(v bool) func(context.Context, events.CursorState) (bool, error) {
		return func(_ context.Context, st events.CursorState) (bool, error) {
			shown = append(shown, st)
			return v, nil
		}
	}
	open := func(since uint64, k func(context.Context, events.CursorState) (bool, error)) (events.Cursor, error) {
		return e.s.Cursor(ctx, events.CursorOptions{Name: name, Since: since, AckWait: keepAckWait, Keep: k})
	}
	c, err := open(e.seq(2), keep(false))
	testutil.NoError(t, err)
	ds := fetch(t, c, 2, e.seq(2), e.seq(3))
	ack(t, ds[0]) // seq(3) stays unacknowledged
	testutil.NoError(t, c.Close())

	// Kept, once seq(3)'s AckWait is over: it resumes after what it
	// acknowledged, seq(3) first.
	c, err = open(e.seq(1), keep(true))
	testutil.NoError(t, err)
	fetch(t, c, 1, e.seq(3))
	testutil.NoError(t, c.Close())

	// Moved to Since (once seq(3)'s AckWait is over again): from seq(1)
	// again, seq(3) included.
	c, err = open(e.seq(1), keep(false))
	testutil.NoError(t, err)
	ack(t, fetch(t, c, 3, e.seq(1), e.seq(2), e.seq(3))...)
	want := fmt.Sprint([]events.CursorState{{Acked: e.seq(2), Pending: 1}, {Acked: e.seq(2), Pending: 1}})
	if got := fmt.Sprint(shown); got != want {
		t.Fatalf("Keep was shown %s, want %s", got, want)
	}

	// Another reader waits on the cursor: refused, whatever Keep says.
	fctx, cancel := context.WithCancel(ctx)
	waiting := make(chan error, 1)
	go func() {
		_, err := c.Fetch(fctx, 1, hangLimit)
		waiting <- err
	}()
	testutil.CheckFor(t, hangLimit, 50*time.Millisecond, func() error {
		c2, err := open(e.seq(1), keep(true))
		if err == nil {
			_ = c2.Close()
			return errors.New("opened while another reader waits on it")
		}
		if !errors.Is(err, events.ErrCursorInUse) || !strings.Contains(err.Error(), "cursor "+name+":") {
			t.Fatalf("error %q, want ErrCursorInUse naming cursor %s", err, name)
		}
		return nil
	})
	cancel()
	<-waiting
	testutil.NoError(t, c.Close())

	// Keep's own error comes back — once the cancelled fetch's pull
	// request is gone: a server keeps it until it expires (hangLimit) or
	// its connection closes, and this store's connection stays open (a
	// cluster may report it a moment after a single server stops).
	boom := errors.New("boom")
	testutil.CheckFor(t, 2*hangLimit, 50*time.Millisecond, func() error {
		_, err = e.s.Cursor(ctx, events.CursorOptions{Name: name, Keep: func(context.Context, events.CursorState) (bool, error) { return false, boom }})
		if errors.Is(err, events.ErrCursorInUse) {
			return err
		}
		testutil.ErrorIs(t, err, boom)
		return nil
	})
}

// confCursorKeepBusy: a reader that holds its cursor and is not fetching
// (writing the batch it fetched, its sink retrying) keeps it: a second
// reader opening the name with Keep waits at most the delivery's AckWait
// and, the first reader acknowledging meanwhile, is refused with
// ErrCursorInUse (at once), on every backend, wherever it would move it;
// the first reader goes on with the next commits, no gap, nothing shared.
// A reader that stopped with a delivery unacknowledged is taken for dead
// once its AckWait is over: the second reader then moves the cursor.
func confCursorKeepBusy(t *testing.T, e env) {
	ctx := testutil.Context(t)
	e.appendMixed(t)
	move := func(context.Context, events.CursorState) (bool, error) { return false, nil }
	for _, tc := range []struct {
		name  string
		since uint64 // where the second reader would move it
		dies  bool   // the first reader stops instead of acknowledging
	}{
		{"behind", e.seq(1), false},
		{"next", e.seq(2), false},
		{"ahead", e.seq(3), false},
		{"reader died", e.seq(2), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := e.agent + "-busy-" + strings.ReplaceAll(tc.name, " ", "-")
			opts := events.CursorOptions{Name: name, Since: e.seq(1), AckWait: time.Second, Keep: move}
			a, err := e.s.Cursor(ctx, opts)
			testutil.NoError(t, err)
			busy := fetch(t, a, 1, e.seq(1)) // A now writes it
			if tc.dies {
				testutil.NoError(t, a.Close())
			} else {
				defer a.Close()
			}

			second := make(chan error, 1)
			go func() {
				opts.Since = tc.since
				b, err := e.s.Cursor(ctx, opts)
				if err == nil {
					defer b.Close()
					var ds []events.Delivery
					if ds, err = b.Fetch(ctx, 3, hangLimit); err == nil && (len(ds) == 0 || ds[0].Seq != tc.since) {
						err = fmt.Errorf("moved cursor fetched %d deliveries, want seq %d first", len(ds), tc.since)
					}
				}
				second <- err
			}()
			if tc.dies {
				testutil.NoError(t, <-second)
				return
			}
			time.Sleep(shortWait) // B waits for A's delivery to pass its AckWait
			ack(t, busy...)
			err = <-second
			if !errors.Is(err, events.ErrCursorInUse) || !strings.Contains(err.Error(), "cursor "+name+":") {
				t.Fatalf("second reader: %v, want ErrCursorInUse naming cursor %s", err, name)
			}
			ack(t, fetch(t, a, 2, e.seq(2), e.seq(3))...)
		})
	}
}

// confCursorReplaced: a reader idle between two fetches, all it fetched
// acknowledged, shows nothing a second reader could see, so the second
// one moves the cursor. Then the first reader's next fetch fails with
// ErrCursorReplaced naming the cursor, wherever the cursor was moved,
// instead of reporting a gap or taking the second reader's commits; the
// second reader gets all of its own.
func confCursorReplaced(t *testing.T, e env) {
	ctx := testutil.Context(t)
	e.appendMixed(t)
	move := func(context.Context, events.CursorState) (bool, error) { return false, nil }
	for _, tc := range []struct {
		name  string
		since uint64 // where the second reader moves it
	}{
		{"behind", e.seq(1)},
		{"next", e.seq(2)},
		{"ahead", e.seq(3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := e.agent + "-moved-" + tc.name
			a, err := e.s.Cursor(ctx, events.CursorOptions{Name: name, Since: e.seq(1), Keep: move})
			testutil.NoError(t, err)
			defer a.Close()
			ack(t, fetch(t, a, 1, e.seq(1))...)

			b, err := e.s.Cursor(ctx, events.CursorOptions{Name: name, Since: tc.since, Keep: move})
			testutil.NoError(t, err)
			defer b.Close()
			ds, err := a.Fetch(ctx, 3, hangLimit)
			if !errors.Is(err, events.ErrCursorReplaced) || !strings.HasPrefix(err.Error(), "events: cursor "+name+": ") {
				t.Fatalf("first reader's fetch: %d deliveries, %v; want ErrCursorReplaced naming %s", len(ds), err, name)
			}
			var want []uint64
			for seq := tc.since; seq <= e.seq(3); seq++ {
				want = append(want, seq)
			}
			ack(t, fetch(t, b, 3, want...)...)
		})
	}
}
