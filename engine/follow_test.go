package engine

import (
	"testing"
	"time"
)

// A consumer that stops delivering while a fold is waited for (its server
// died: a cluster node killed while it hosted the engine's consumer) is
// recreated by the watchdog from the next sequence to fold, and the wait
// ends with every commit folded.
func TestFollow_StalledConsumerIsRecreated(t *testing.T) {
	st := openStore(t)
	clock := newFakeClock()
	a := newEngine(t, st, clock)
	b := newEngine(t, st, clock)
	ctx := ctxT(t)

	// a's consumer goes silent.
	a.fol.mu.Lock()
	a.fol.cc.Stop()
	a.fol.mu.Unlock()

	// b writes: a turn, whose commits a can only learn from the stream.
	res, err := b.RunTurn(ctx, TurnRequest{Session: "s"}, script{})
	if err != nil {
		t.Fatal(err)
	}
	last := b.Position()
	begin := time.Now()
	if err := a.SyncTo(ctx, last); err != nil {
		t.Fatal(err)
	}
	took := time.Since(begin)
	if n := a.fol.restarts.Load(); n != 1 {
		t.Fatalf("%d consumer restarts, want 1", n)
	}
	if took < stallRestart || took > stallRestart+3*time.Second {
		t.Fatalf("caught up after %v, want about %v (the stall bound)", took, stallRestart)
	}
	if got := a.Position(); got != last {
		t.Fatalf("a folded to %d, want %d", got, last)
	}
	if _, ok := a.Turn(res.TurnID); !ok {
		t.Fatalf("a does not know turn %s", res.TurnID)
	}
}
