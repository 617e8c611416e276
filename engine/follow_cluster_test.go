package engine

import (
	"context"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
)

// A 3-node cluster, R3 stream: the node hosting engine a's consumer is
// killed (cut off, then stopped). Writes through engine b go on, and a
// folds them within a few seconds, while the node is still down: its
// consumer is recreated on a live node (by nats.go, or by the watchdog
// when nats.go does not notice).
func TestFollow_ConsumerHostKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster and may wait for an election")
	}
	c := natstest.StartCluster(t, 3)
	ctx := ctxT(t)
	open := func() events.Store {
		st, err := events.Open(ctx, events.WithURL(c.URLs()), events.WithReplicas(3))
		require_NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	clock := newFakeClock()
	a := newEngine(t, open(), clock)
	b := newEngine(t, open(), clock)

	a.fol.mu.Lock()
	host := ""
	if ci := a.fol.cons.CachedInfo(); ci != nil && ci.Cluster != nil {
		host = ci.Cluster.Leader
	}
	a.fol.mu.Unlock()
	victim := -1
	for i := range c.N() {
		if c.Server(i) != nil && c.Server(i).Name() == host {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("consumer host %q not found", host)
	}
	// Move the stream's leadership off the consumer's node, so the node
	// killed is a follower (the consumer stays where it was created).
	if leader := c.StreamLeader(t, events.StreamName); leader == victim {
		if _, err := a.store.Conn().Request("$JS.API.STREAM.LEADER.STEPDOWN."+events.StreamName, nil, 5*time.Second); err != nil {
			t.Fatalf("step down: %v", err)
		}
		c.WaitStreamLeader(t, events.StreamName, victim)
	}
	leader := c.StreamLeader(t, events.StreamName)
	t.Logf("a's consumer on n%d, stream leader n%d", victim, leader)
	c.Stop(victim)
	killed := time.Now()

	res, err := b.RunTurn(ctx, TurnRequest{Session: "s"}, script{})
	require_NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := a.SyncTo(wctx, b.Position()); err != nil {
		t.Fatalf("a did not fold b's turn within 15 s of the kill: %v (restarts %d)", err, a.fol.restarts.Load())
	}
	if _, ok := a.Turn(res.TurnID); !ok {
		t.Fatalf("a does not know turn %s", res.TurnID)
	}
	t.Logf("a folded b's turn %v after the kill (watchdog restarts: %d)", time.Since(killed).Round(time.Millisecond), a.fol.restarts.Load())
}
