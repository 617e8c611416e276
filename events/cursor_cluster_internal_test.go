package events

import (
	"context"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/natstest"
)

// A 3-node cluster, R3 stream and cursor: the cursor's durable consumer
// changes leader (a step-down), then the node leading it is killed. An exporter's fetch loop on a goes on
// without an error (a pull that reaches no consumer leader is a quiet
// stream until one is elected) and receives the commit b appends after
// the kill, while the node is still down.
func TestCursor_ConsumerLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster and waits for an election")
	}
	c := natstest.StartCluster(t, 3)
	a, b := openR3(t, c), openR3(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cur, err := a.Cursor(ctx, CursorOptions{Name: "exporter"})
	if err != nil {
		t.Fatal(err)
	}
	// fetchUntil fetches (as an exporter does, 1 s at a time) until seq
	// comes, acknowledging what it gets; any error fails the test.
	fetchUntil := func(seq uint64) {
		t.Helper()
		for ctx.Err() == nil {
			ds, err := cur.Fetch(ctx, 16, time.Second)
			if err != nil {
				t.Fatalf("fetch while waiting for sequence %d: %v", seq, err)
			}
			for _, d := range ds {
				if err := d.Ack(ctx); err != nil {
					t.Fatalf("ack %d: %v", d.Seq, err)
				}
				if d.Seq == seq {
					return
				}
			}
		}
		t.Fatalf("sequence %d not fetched: %v", seq, ctx.Err())
	}
	first := appendTurn(t, b, "t-1")
	fetchUntil(first)

	// The consumer's leader steps down while a fetch waits (what an
	// operator's `nats consumer cluster step-down` does): the fetch loop
	// goes on, and gets the commit appended after it.
	stepped := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := a.nc.Request("$JS.API.CONSUMER.LEADER.STEPDOWN."+StreamName+".exporter", nil, 5*time.Second)
		time.Sleep(500 * time.Millisecond)
		if err == nil {
			_, err = b.Append(context.Background(), MustSubject("main", AggTurn, "t-1b"), AnySeq,
				New("main", "t-1b", groupT0, TurnSucceeded{TurnID: "t-1b", Attempts: 1}))
		}
		stepped <- err
	}()
	fetchUntil(first + 1)
	if err := <-stepped; err != nil {
		t.Fatalf("step down, then append: %v", err)
	}

	ci, err := cur.(*cursor).cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	victim := -1
	for i := range c.N() {
		if ci.Cluster != nil && c.Server(i).Name() == ci.Cluster.Leader {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("consumer leader %+v not found", ci.Cluster)
	}
	c.Stop(victim)
	killed := time.Now()
	fetchUntil(appendTurn(t, b, "t-2"))
	t.Logf("fetched b's commit %v after the consumer leader n%d was killed", time.Since(killed).Round(time.Millisecond), victim)
}
