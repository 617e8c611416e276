package events

import (
	"testing"
	"time"
)

// TestStallGuard_AbortsWithoutProgressOnly checks that the guard aborts a
// read that gets no message for its timeout and reports it, and that a
// stopped guard never aborts.
func TestStallGuard_AbortsWithoutProgressOnly(t *testing.T) {
	aborted := make(chan struct{})
	g := newStallGuard(time.Millisecond, func() { close(aborted) })
	select {
	case <-aborted:
	case <-time.After(5 * time.Second):
		t.Fatal("no abort after 5 s without progress")
	}
	if !g.fired() {
		t.Fatal("aborted but fired() = false")
	}
	g.stop()

	calls := 0
	g = newStallGuard(time.Hour, func() { calls++ })
	g.progress()
	g.stop()
	g.check() // a check after stop, as a timer racing with stop would run it
	if calls != 0 || g.fired() {
		t.Fatalf("stopped guard: %d aborts, fired %v; want 0, false", calls, g.fired())
	}
}

// TestStallGuard_ProgressPutsOffTheAbort: a check after progress re-arms
// instead of aborting; the next check with none since aborts (the checks
// are called directly, the timer an hour away).
func TestStallGuard_ProgressPutsOffTheAbort(t *testing.T) {
	calls := 0
	g := newStallGuard(time.Hour, func() { calls++ })
	defer g.stop()
	for i := range 3 {
		g.progress()
		g.check()
		if calls != 0 || g.fired() {
			t.Fatalf("check %d after progress: %d aborts, fired %v; want none", i, calls, g.fired())
		}
	}
	g.check()
	if calls != 1 || !g.fired() {
		t.Fatalf("check without progress: %d aborts, fired %v; want 1, true", calls, g.fired())
	}
}
