package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
)

// A snapshot is encoded after the state's lock is released, from a
// capture taken under it: folds that follow the capture — new sessions,
// skip marks written in place, probe times, stored orders, subject
// sequences, turns started and finished — must not reach it. The capture
// is encoded while those folds run (go test -race checks that nothing is
// shared), and its encoding is the state's at the moment of the capture.
func TestSnapshot_CaptureIsNotChangedByLaterFolds(t *testing.T) {
	ctx, st, clock := memFixture(t)
	e := newEngine(t, st, clock, WithSnapshotEvery(0))
	fail := script{"anthropic/claude-opus-4-6": rateLimit(), "openai/gpt-5": authError()}
	turns := func(from, to int) {
		for i := from; i < to; i++ {
			_, _ = e.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: fmt.Sprintf("s%d", i%3)}, fail)
			clock.Advance(31 * time.Second)
		}
	}
	turns(0, 4)
	_, err := e.SetAuthOrder(ctx, "anthropic", []string{"anthropic:b", "anthropic:a"}, "ops")
	testutil.NoError(t, err)

	e.st.mu.RLock()
	c := e.st.capture()
	want, err := e.st.encodeState()
	e.st.mu.RUnlock()
	testutil.NoError(t, err)

	encoded := make(chan []byte, 1)
	go func() {
		b, err := c.encode()
		if err != nil {
			t.Error(err)
		}
		encoded <- b
	}()
	// A day later the skip marks have expired: openai is tried again, its
	// auth failure writes the sessions' skip-mark maps in place.
	clock.Advance(24 * time.Hour)
	turns(4, 12) // the same sessions (their skip marks) and new ones
	_, err = e.SetAuthOrder(ctx, "anthropic", []string{"anthropic:a"}, "ops")
	testutil.NoError(t, err)
	got := <-encoded

	sameState(t, "capture encoded during later folds", want, got)
	if again, err := c.encode(); err != nil || string(again) != string(want) {
		t.Fatalf("the capture encoded after the folds differs (err %v)", err)
	}
	if now := stateOf(t, e); string(now) == string(want) {
		t.Fatal("the later folds changed nothing: the test shows nothing")
	}
}
