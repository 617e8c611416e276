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

// confCursorKeep: with CursorOptions.Keep the caller decides where an
// existing cursor stands. Keep is shown the acknowledged position and
// the deliveries left unacknowledged; false moves the cursor to Since
// (those deliveries dropped), true keeps it; a new cursor starts at
// Since without asking. A cursor another reader waits on is refused
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
		return e.s.Cursor(ctx, events.CursorOptions{Name: name, Since: since, Keep: k})
	}

	c, err := open(e.seq(2), keep(false))
	testutil.NoError(t, err)
	ds := fetch(t, c, 2, e.seq(2), e.seq(3))
	ack(t, ds[0]) // seq(3) stays unacknowledged
	testutil.NoError(t, c.Close())

	// Kept: it resumes after what it acknowledged (seq(3) is delivered
	// again only after AckWait, so nothing now).
	c, err = open(e.seq(1), keep(true))
	testutil.NoError(t, err)
	fetch(t, c, 0)
	testutil.NoError(t, c.Close())

	// Moved to Since: from seq(1) again, at once, seq(3) included.
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

	// Keep's own error comes back.
	boom := errors.New("boom")
	_, err = e.s.Cursor(ctx, events.CursorOptions{Name: name, Keep: func(context.Context, events.CursorState) (bool, error) { return false, boom }})
	testutil.ErrorIs(t, err, boom)
}
