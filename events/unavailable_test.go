package events_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// withoutStream opens a store on a NATS server of its own, then deletes
// the stream behind its back, as if the stream's servers were gone: a
// publish then has no responder (or, with silent, a subscriber that never
// answers, as a stream leader lost mid-request). It returns the store and
// a function that creates the stream again (from sequence 100).
func withoutStream(t *testing.T, silent bool, opts ...events.Option) (events.Store, func()) {
	t.Helper()
	st, js, url := onOwnServer(t, opts...)
	testutil.NoError(t, js.DeleteStream(testutil.Context(t), events.StreamName))
	var sub *nats.Subscription
	if silent {
		nc := js.Conn()
		var err error
		sub, err = nc.Subscribe("fledger.>", func(*nats.Msg) {})
		testutil.NoError(t, err)
		testutil.NoError(t, nc.Flush())
	}
	return st, func() {
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		// Made again as a rotation makes it: continuing the sequences.
		again, err := events.Open(testutil.Context(t), events.WithURL(url), events.WithFirstSeq(100))
		testutil.NoError(t, err)
		_ = again.Close()
	}
}

func TestAppend_UnavailableSaysWhetherItMayBeStored(t *testing.T) {
	cases := []struct {
		name   string
		silent bool
		want   events.Outcome
	}{
		{"no responder: nothing stored", false, events.NotStored},
		{"no answer: outcome unknown", true, events.OutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Attempts of 1 s: long enough that a no-responders answer
			// arrives within one on a loaded machine (-race), so the
			// outcome is decided by the server's answer, not by timing.
			st, _ := withoutStream(t, tc.silent, events.WithRetryUnknown(2500*time.Millisecond, time.Second))
			begin := time.Now()
			_, err := st.Append(testutil.Context(t), profileSubj, 0, failure("turn-1", 1)...)
			took := time.Since(begin)
			var ue *events.UnavailableError
			if !errors.As(err, &ue) || !errors.Is(err, events.ErrUnavailable) {
				t.Fatalf("err %v, want an *UnavailableError", err)
			}
			if ue.Op != "append" || ue.Subject != profileSubj || ue.Outcome != tc.want || ue.Attempts < 2 {
				t.Fatalf("%+v", ue)
			}
			if took > 5*time.Second {
				t.Fatalf("gave up after %v, retry time 2.5s", took)
			}
			if !strings.Contains(err.Error(), "stream unavailable after") {
				t.Fatalf("error %q", err)
			}
		})
	}
}

// An append the stream does not answer is re-sent while it waits, but
// never onto a stream of the same name created since the store opened its
// own (removed and made again while the append waited: a rotation under
// a running gateway): it was decided on the old one. It ends with an
// error wrapping ErrStreamGone, nothing stored. (Riding out an outage of
// the same stream, stored once: TestCluster_AppendRidesOutALeaderElection.)
func TestAppend_NotResentOntoAStreamCreatedMeanwhile(t *testing.T) {
	for _, silent := range []bool{false, true} {
		st, restore := withoutStream(t, silent, events.WithRetryUnknown(10*time.Second, 200*time.Millisecond))
		// The restore ends before the iteration does: an open still
		// running when the test's contexts are cancelled would fail it.
		restored := make(chan struct{})
		time.AfterFunc(700*time.Millisecond, func() { defer close(restored); restore() })
		_, err := st.Append(testutil.Context(t), profileSubj, 0, failure("turn-1", 1)...)
		<-restored
		if !errors.Is(err, events.ErrStreamGone) || !strings.Contains(err.Error(), "stream was replaced while this process ran") {
			t.Fatalf("silent %v: append across the stream's re-creation: %v, want ErrStreamGone saying it was replaced", silent, err)
		}
		js, err := jetstream.New(events.ConnOf(st))
		testutil.NoError(t, err)
		str, err := js.Stream(testutil.Context(t), events.StreamName)
		testutil.NoError(t, err)
		if n := str.CachedInfo().State.Msgs; n != 0 {
			t.Fatalf("silent %v: the re-created stream holds %d messages, want 0", silent, n)
		}
		if _, err := st.LastSeq(testutil.Context(t), ""); !errors.Is(err, events.ErrStreamGone) {
			t.Fatalf("silent %v: the store's LastSeq on the re-created stream: %v, want ErrStreamGone", silent, err)
		}
	}
}

// A 3-node cluster, R3 stream, its leader killed: an append sent during
// the election by a store with the default retry time is stored once,
// right after the new leader is elected; a store with a retry time shorter
// than the election gives up with an *UnavailableError, for reads too,
// saying nothing was written; both work again after the election.
func TestCluster_AppendRidesOutALeaderElection(t *testing.T) {
	if testing.Short() {
		t.Skip("a leader election takes about 6 s")
	}
	c := natstest.StartCluster(t, 3)
	ctx := testutil.Context(t)
	open := func(opts ...events.Option) events.Store {
		st, err := events.Open(ctx, append([]events.Option{events.WithURL(c.URLs()), events.WithReplicas(3)}, opts...)...)
		testutil.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	patient := open()
	hasty := open(events.WithRetryUnknown(800*time.Millisecond, 300*time.Millisecond))
	for i := range 5 {
		_, err := patient.Append(ctx, events.MustSubject("main", events.AggTurn, fmt.Sprintf("t%d", i)), 0, failure(fmt.Sprintf("t%d", i), 1)[:1]...)
		testutil.NoError(t, err)
	}
	leader := c.StreamLeader(t, events.StreamName)
	c.Stop(leader)

	_, err := hasty.LastSeq(ctx, "")
	var ue *events.UnavailableError
	if !errors.As(err, &ue) || ue.Outcome != events.NotStored || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("LastSeq during the election: %v", err)
	}
	_, err = hasty.Append(ctx, profileSubj, 0, failure("late", 1)...)
	if !errors.As(err, &ue) || ue.Op != "append" {
		t.Fatalf("hasty append during the election: %v", err)
	}
	res, err := patient.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	if res.Taken || len(res.Events) != 2 {
		t.Fatalf("patient append: %+v", res)
	}
	c.WaitStreamLeader(t, events.StreamName, leader)
	last, err := hasty.LastSeq(ctx, "")
	testutil.NoError(t, err)
	evs, _, err := patient.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	// The hasty append may or may not have been stored (its outcome was
	// unknown); the patient one is stored exactly once.
	n := 0
	for _, ev := range evs {
		if ev.CorrelationID == "turn-1" && ev.Index == 0 {
			n++
		}
	}
	if n != 1 || last < 6 {
		t.Fatalf("turn-1 stored %d times; stream last seq %d", n, last)
	}
}

func TestOpen_DuplicateWindowMustCoverTheRetryTime(t *testing.T) {
	_, err := events.Open(context.Background(), events.WithDataDir(t.TempDir()), events.WithRetryUnknown(2*time.Minute, 0))
	testutil.ErrorIs(t, err, events.ErrInvalidOption)
	if !strings.Contains(err.Error(), "retry time 2m0s plus the timeout") {
		t.Fatalf("error %q", err)
	}
}

// --replicas 3 against a server that is not in a cluster is refused at
// once, saying so.
func TestOpen_ReplicasOnASingleServer(t *testing.T) {
	url := natstest.StartNode(t)
	_, err := events.Open(testutil.Context(t), events.WithURL(url), events.WithReplicas(3))
	testutil.ErrorIs(t, err, events.ErrInvalidOption)
	if !strings.Contains(err.Error(), "not part of a cluster") {
		t.Fatalf("error %q", err)
	}
}
