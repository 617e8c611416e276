package engine

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// A stream removed and created again under a running engine (a rotation
// while a gateway ran, reviewer revT H1): the engine stops following (its
// fold would otherwise go on with the new stream's commits on the old
// state), decides nothing, and its Close saves no snapshot labelled with
// the new stream, so an engine on the new stream starts empty. (RunTurn,
// which decides on the engine's fold without asking the stream first,
// is refused once the follower has stopped: within followIdentityCheck.)
func TestEngine_StreamReplacedUnderIt(t *testing.T) {
	url := natstest.StartNode(t)
	ctx := testutil.Context(t)
	st, err := events.Open(ctx, events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	clock := testutil.NewManualClock(time.UnixMilli(1_700_000_000_000))
	e1 := newEngine(t, st, clock)
	for i := range 3 {
		_, _ = e1.RunTurn(ctx, TurnRequest{TurnID: fmt.Sprintf("t%d", i), Session: "s1"}, script{"anthropic/claude-sonnet-4": rateLimit()})
		clock.Advance(time.Second)
	}
	last, err := st.LastSeq(ctx, "")
	testutil.NoError(t, err)
	js := natstest.JetStream(t, url)
	testutil.NoError(t, js.DeleteStream(ctx, events.StreamName))
	_ = js.DeleteObjectStore(ctx, events.SnapshotBucket)
	again, err := events.Open(ctx, events.WithURL(url), events.WithFirstSeq(last+1))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	e2 := newEngine(t, again, clock, WithSnapshotEvery(0)) // config apply at LAST+1
	e2.Close()

	// The step API (serve's) syncs before each decision: refused at once.
	if _, err := e1.BeginTurn(ctx, TurnRequest{TurnID: "after", Session: "s1"}); !errors.Is(err, events.ErrStreamGone) {
		t.Fatalf("a begin on the old engine after the stream was replaced: %v, want ErrStreamGone", err)
	}
	// The follower finds the stream replaced at its next identity check
	// (every 5 s); it may have folded the new stream's first commits
	// before, which no decision and no snapshot uses.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		e1.st.mu.RLock()
		failed := e1.st.failed
		e1.st.mu.RUnlock()
		if failed != nil {
			break
		}
	}
	e1.st.mu.RLock()
	failed := e1.st.failed
	e1.st.mu.RUnlock()
	if !errors.Is(failed, events.ErrStreamGone) {
		t.Fatalf("the old engine's fold: failed %v; want it stopped with ErrStreamGone", failed)
	}
	e1.Close()
	e3 := newEngineNoConfig(t, again, clock)
	if e3.StartedFrom() != 0 {
		t.Fatalf("an engine on the fresh stream loaded the old stream's state (snapshot seq %d)", e3.StartedFrom())
	}
}
