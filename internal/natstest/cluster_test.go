package natstest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/internal/natstest"
)

func connect(t *testing.T, urls string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// publish stores n messages on subject, retrying each (same message id,
// so it is stored once) until it is acknowledged or ctx ends: the
// stream may be electing a leader.
func publish(ctx context.Context, t *testing.T, js jetstream.JetStream, subject string, from, n int) uint64 {
	t.Helper()
	var last uint64
	for i := from; i < from+n; i++ {
		for {
			actx, cancel := context.WithTimeout(ctx, time.Second)
			ack, err := js.Publish(actx, subject, []byte(fmt.Sprint(i)), jetstream.WithMsgID(fmt.Sprint("m", i)))
			cancel()
			if err == nil {
				last = ack.Sequence
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
		}
	}
	return last
}

func TestCluster_LeaderStoppedNewLeaderRestartedCatchesUp(t *testing.T) {
	start := time.Now()
	c := natstest.StartCluster(t, 3)
	t.Logf("3 nodes ready in %v", time.Since(start))
	if n := strings.Count(c.URLs(), ",") + 1; n != 3 || !strings.HasPrefix(c.URL(0), "nats://127.0.0.1:") {
		t.Fatalf("URLs %q", c.URLs())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	js := connect(t, c.URLs())
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if last := publish(ctx, t, js, "s.a", 0, 10); last != 10 {
		t.Fatalf("last sequence %d, want 10", last)
	}
	leader := c.StreamLeader(t, "S")
	for i := range c.N() {
		c.WaitCaughtUp(t, "S", i, 10)
	}

	stopped := time.Now()
	c.Stop(leader)
	if c.Server(leader) != nil {
		t.Fatal("stopped node still has a server")
	}
	if _, ok := c.StreamState(leader, "S"); ok {
		t.Fatal("stopped node reports a stream state")
	}
	next := c.WaitStreamLeader(t, "S", leader)
	t.Logf("leader n%d stopped; n%d leads after %v", leader, next, time.Since(stopped))
	if next == leader {
		t.Fatalf("new leader is the stopped node %d", leader)
	}
	// Writes go on with the node down (2 of 3 are a quorum).
	if last := publish(ctx, t, js, "s.a", 10, 10); last != 20 {
		t.Fatalf("last sequence %d after the election, want 20", last)
	}
	t.Logf("10 more published %v after the stop", time.Since(stopped))

	restarted := time.Now()
	c.Restart(t, leader)
	t.Logf("n%d restarted in %v", leader, time.Since(restarted))
	if c.Server(leader) == nil {
		t.Fatal("restarted node has no server")
	}
	c.WaitCaughtUp(t, "S", leader, 20)
	t.Logf("n%d caught up %v after its restart", leader, time.Since(restarted))
	st, _ := c.StreamState(leader, "S")
	if st.Msgs != 20 || st.FirstSeq != 1 || st.LastSeq != 20 {
		t.Fatalf("restarted node's replica: %+v, want messages 1..20", st)
	}
	if l := c.StreamLeader(t, "S"); c.Server(l) == nil {
		t.Fatalf("leader %d is not running", l)
	}
}

func TestStartNode_JetStreamOnLoopback(t *testing.T) {
	url := natstest.StartNode(t)
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("URL %q is not loopback", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js := connect(t, url)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	if last := publish(ctx, t, js, "s.a", 0, 3); last != 3 {
		t.Fatalf("last sequence %d, want 3", last)
	}
}

// Shutdown is the graceful stop: the leader hands its streams over, so a
// new leader is there without waiting for an election timeout.
func TestCluster_ShutdownHandsLeadershipOver(t *testing.T) {
	c := natstest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := connect(t, c.URLs())
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	publish(ctx, t, js, "s.a", 0, 3)
	leader := c.StreamLeader(t, "S")
	stopped := time.Now()
	c.Shutdown(leader)
	next := c.WaitStreamLeader(t, "S", leader)
	t.Logf("n%d shut down; n%d leads after %v", leader, next, time.Since(stopped))
	if last := publish(ctx, t, js, "s.a", 3, 1); last != 4 {
		t.Fatalf("last sequence %d, want 4", last)
	}
}
