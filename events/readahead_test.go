package events_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// TestRead_DecodeAheadKeepsOrderAndStops reads a stream longer than many
// decode chunks and direct-get batches: events come in stream order, a
// consumer that stops early or whose context ends leaves no goroutine
// behind, and a cancelled read ends with the context's error.
func TestRead_DecodeAheadKeepsOrderAndStops(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	const commits = 2500
	for i := range commits {
		key := fmt.Sprintf("p%d", i)
		ev := events.New("main", key, t0, events.ProfileCleared{ProfileID: key, By: "test"})
		_, err := s.Append(ctx, events.MustSubject("main", events.AggProfile, key), events.AnySeq, ev)
		testutil.NoError(t, err)
	}
	before := runtime.NumGoroutine()

	var seq uint64
	n := 0
	for ev, err := range s.Read(ctx, 1) {
		testutil.NoError(t, err)
		if ev.Seq != seq+1 || ev.Data.(events.ProfileCleared).ProfileID != fmt.Sprintf("p%d", n) {
			t.Fatalf("event %d: seq %d after %d, payload %+v", n, ev.Seq, seq, ev.Data)
		}
		seq = ev.Seq
		n++
	}
	if n != commits {
		t.Fatalf("read %d events, want %d", n, commits)
	}

	// From the middle, stopping early.
	n = 0
	for ev, err := range s.Read(ctx, 1001) {
		testutil.NoError(t, err)
		if ev.Seq != uint64(1001+n) {
			t.Fatalf("seq %d, want %d", ev.Seq, 1001+n)
		}
		if n++; n == 70 {
			break
		}
	}

	// A context cancelled mid-read: the events before, then its error.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last error
	n = 0
	for _, err := range s.Read(cctx, 1) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 100 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) || n >= commits {
		t.Fatalf("after cancel: %d events, last error %v", n, last)
	}

	evs, lastSeq, err := s.ReadSubject(ctx, "fledger.main.profile.>")
	testutil.NoError(t, err)
	if len(evs) != commits || lastSeq != commits {
		t.Fatalf("ReadSubject: %d events, last %d", len(evs), lastSeq)
	}

	testutil.CheckFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if g := runtime.NumGoroutine(); g > before {
			return fmt.Errorf("%d goroutines after the reads, %d before", g, before)
		}
		return nil
	})
}
