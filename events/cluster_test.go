package events_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// The store's contract on a replicated stream is checked by
// TestConformance/Cluster3 (conformance_test.go); these are the
// cluster-only properties.

// openCluster opens a store on c with an R3 stream and closes it when the
// test ends.
func openCluster(t *testing.T, url string, opts ...events.Option) events.Store {
	t.Helper()
	s, err := events.Open(testutil.Context(t), append([]events.Option{events.WithURL(url), events.WithReplicas(3)}, opts...)...)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestCluster_StreamIsReplicatedOnEveryNode: a store given one node's URL
// creates the stream R3, with a leader and two current replicas, and
// every node holds every commit.
func TestCluster_StreamIsReplicatedOnEveryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	c := natstest.StartCluster(t, 3)
	s := openCluster(t, c.URL(1))
	ctx := testutil.Context(t)
	var last uint64
	for i := range 20 {
		res, err := s.Append(ctx, profileSubj, last, failure(fmt.Sprint("turn-", i), 1)...)
		testutil.NoError(t, err)
		last = res.Seq
	}
	st, err := rawJS(t, s).Stream(ctx, events.StreamName)
	testutil.NoError(t, err)
	info, err := st.Info(ctx)
	testutil.NoError(t, err)
	if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream config replicas %d, cluster %+v", info.Config.Replicas, info.Cluster)
	}
	leader := c.StreamLeader(t, events.StreamName)
	if info.Cluster.Leader != fmt.Sprint("n", leader) {
		t.Fatalf("stream info names leader %s, the harness n%d", info.Cluster.Leader, leader)
	}
	for i := range c.N() {
		c.WaitCaughtUp(t, events.StreamName, i, last)
		if st, _ := c.StreamState(i, events.StreamName); st.Msgs != 20 || st.LastSeq != 20 {
			t.Fatalf("node %d holds %+v, want messages 1..20", i, st)
		}
	}
}

// TestCluster_TwoStoresRacingOneStepID: two fledger instances (two stores,
// group commit on, each on another node) decide the same turn step at the
// same moment, so their commits share the step's message id: one is
// stored, the other is answered Taken with its sequence.
func TestCluster_TwoStoresRacingOneStepID(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	c := natstest.StartCluster(t, 3)
	a := openCluster(t, c.URL(0))
	b := openCluster(t, c.URL(2))
	ctx := testutil.Context(t)
	const rounds = 10
	for round := range rounds {
		key := fmt.Sprint("turn-", round)
		subj := events.MustSubject("main", events.AggTurn, key)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			evs   [2]events.Event
			ress  [2]events.AppendResult
			errs  [2]error
		)
		for i, s := range []events.Store{a, b} {
			evs[i] = events.New("main", key, t0, events.TurnSucceeded{TurnID: key, Attempts: i + 1})
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ress[i], errs[i] = s.AppendCommit(ctx, events.AppendRequest{Subject: subj, Expected: 0,
					MsgID: key + " after 0", Events: []events.Event{evs[i]}})
			}()
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Errorf("round %d: errors %v / %v", round, errs[0], errs[1])
			continue
		}
		if ress[0].Seq != ress[1].Seq || ress[0].Duplicate == ress[1].Duplicate || ress[0].Taken != ress[0].Duplicate || ress[1].Taken != ress[1].Duplicate {
			t.Errorf("round %d: results %+v / %+v, want one stored and one taken at the same sequence", round, ress[0], ress[1])
			continue
		}
		won := 0
		if ress[0].Duplicate {
			won = 1
		}
		m := jsInspector{}.msg(t, a, ress[won].Seq)
		var commit events.Commit
		testutil.NoError(t, json.Unmarshal(m.Data, &commit))
		if m.Subject != subj || commit.Events[0].ID != evs[won].ID {
			t.Errorf("round %d: stored %s on %s, answered as stored %s", round, commit.Events[0].ID, m.Subject, evs[won].ID)
		}
	}
	if !t.Failed() {
		(env{s: a, backend: backend{look: jsInspector{}}}).wantStream(t, rounds)
	}
}
