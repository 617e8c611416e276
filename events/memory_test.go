package events_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// The in-memory store's own properties; the Store contract it shares
// with the JetStream store is checked by TestConformance/Memory.

// Options that need a server are refused naming the option; the others
// are accepted.
func TestOpenMemory_OptionsThatNeedAServerAreRefused(t *testing.T) {
	for _, c := range []struct {
		opt  events.Option
		name string // "" = accepted
	}{
		{events.WithURL("nats://127.0.0.1:4222"), "WithURL"},
		{events.WithDataDir(t.TempDir()), "WithDataDir"},
		{events.WithListen(0), "WithListen"},
		{events.WithListenPasswords("w", "r"), "WithListenPasswords"},
		{events.WithReaderRequests("svc.read"), "WithReaderRequests"},
		{events.WithListenerCredentials(t.TempDir(), events.ReadOnly), "WithListenerCredentials"},
		{events.WithUserInfo("u", "p"), "WithUserInfo"},
		{events.WithCredsFile("x.creds"), "WithCredsFile"},
		{events.WithTLS("ca.pem", "", ""), "WithTLS"},
		{events.WithReplicas(3), "WithReplicas(3)"},
		{events.WithFirstSeq(1001), "WithFirstSeq(1001)"},
		{events.WithReplicas(1), ""},
		{events.WithFirstSeq(1), ""},
		{events.WithGroupCommit(true), ""},
		{events.WithSyncAlways(false, time.Second), ""},
		{events.WithTimeout(time.Second), ""},
		{events.WithRetryUnknown(0, 0), ""},
		{events.WithDuplicateWindow(time.Second), ""},
		{events.WithMaxCommitBytes(4096), ""},
		{events.WithMaxEventsPerCommit(2), ""},
		{events.WithRegistry(events.NewCatalogRegistry()), ""},
	} {
		s, err := events.OpenMemory(c.opt)
		if c.name == "" {
			testutil.NoError(t, err)
			testutil.NoError(t, s.Close())
			continue
		}
		testutil.ErrorIs(t, err, events.ErrInvalidOption)
		if !strings.Contains(err.Error(), c.name) {
			t.Errorf("error %q does not name %s", err, c.name)
		}
	}
}

// A commit read from the in-memory store equals the same commit read from
// the JetStream store: same events, sequences, indexes and basis.
func TestOpenMemory_ReadsAsTheJetStreamStoreReads(t *testing.T) {
	ctx := testutil.Context(t)
	js, _ := testutil.OpenStore(t)
	mem := openMemory(t)
	commits := []events.AppendRequest{
		{Subject: profileSubj, Expected: 0, Events: failure("turn-1", 1)},
		{Subject: events.MustSubject("main", events.AggTurn, "turn-1"), Expected: events.AnySeq, Basis: 1,
			Events: []events.Event{events.New("main", "turn-1", t0, events.TurnSucceeded{TurnID: "turn-1", Attempts: 1})}},
	}
	for _, req := range commits {
		a, err := js.AppendCommit(ctx, req)
		testutil.NoError(t, err)
		b, err := mem.AppendCommit(ctx, req)
		testutil.NoError(t, err)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("append results differ:\njetstream %+v\nmemory    %+v", a, b)
		}
	}
	if a, b := collect(t, js, 1), collect(t, mem, 1); len(a) != 3 || !reflect.DeepEqual(a, b) {
		t.Fatalf("read %d events from jetstream, %d from memory, or they differ", len(a), len(b))
	}
}

// A message id is forgotten after the duplicate window: the same commit
// is then stored again.
func TestOpenMemory_DuplicateWindowEnds(t *testing.T) {
	const window = 100 * time.Millisecond
	s := openMemory(t, events.WithDuplicateWindow(window))
	ctx := testutil.Context(t)
	evs := failure("turn-1", 1)
	res, err := s.Append(ctx, profileSubj, events.AnySeq, evs...)
	testutil.NoError(t, err)
	res, err = s.Append(ctx, profileSubj, events.AnySeq, evs...)
	testutil.NoError(t, err)
	if !res.Duplicate || res.Seq != 1 {
		t.Fatalf("re-sent within the window: %+v", res)
	}
	time.Sleep(window + 10*time.Millisecond)
	res, err = s.Append(ctx, profileSubj, events.AnySeq, evs...)
	testutil.NoError(t, err)
	if res.Duplicate || res.Seq != 2 {
		t.Fatalf("re-sent after the window: %+v, want stored at 2", res)
	}
}

// Status reports the store as a connected single current replica, and
// closed after Close; it is not read-only and has no NATS connection.
func TestOpenMemory_StatusAndIdentity(t *testing.T) {
	s := openMemory(t)
	appendN(t, env{s: s, agent: "main"}, profileSubj, profileID, 2)
	want := events.StreamStatus{Connected: true, Server: "memory", Leader: "memory", Replicas: 1, Current: 1, LastSeq: 2}
	if st := events.Status(testutil.Context(t), s); !reflect.DeepEqual(st, want) {
		t.Fatalf("status %+v, want %+v", st, want)
	}
	if events.IsReadOnly(s) || events.ConnOf(s) != nil || s.ClientURL() != "" {
		t.Fatalf("read-only %v, connection %v, client URL %q", events.IsReadOnly(s), events.ConnOf(s), s.ClientURL())
	}
	testutil.NoError(t, s.Close())
	if st := events.Status(testutil.Context(t), s); st.Connected || !errors.Is(st.Err, events.ErrClosed) {
		t.Fatalf("status after Close %+v", st)
	}
}

// Close ends every reader waiting for new commits: Watch without an
// error, Follow with ErrClosed, a Fetch with ErrClosed.
func TestOpenMemory_CloseEndsWaitingReaders(t *testing.T) {
	s := openMemory(t)
	ctx := testutil.Context(t)
	c, err := s.Cursor(ctx, events.CursorOptions{Name: "exporter", Since: 2}) // waits for a commit to come
	testutil.NoError(t, err)
	fetched := make(chan error, 1)
	go func() {
		_, err := c.Fetch(ctx, 1, time.Hour)
		fetched <- err
	}()
	appendN(t, env{s: s, agent: "main"}, profileSubj, profileID, 1)
	w := iterate(s.Watch(ctx, 1))
	f := iterate(s.Follow(ctx, events.FollowOptions{}))
	w.next(t, "the stored event")
	f.next(t, "the stored commit") // both are running: now they wait
	testutil.NoError(t, s.Close())
	w.wantEnd(t, nil)
	f.wantEnd(t, events.ErrClosed)
	select {
	case err := <-fetched:
		testutil.ErrorIs(t, err, events.ErrClosed)
	case <-time.After(hangLimit):
		t.Fatal("fetch still waiting after Close")
	}
}

// Many writers and followers at once: every follower sees every commit,
// in order.
func TestOpenMemory_ConcurrentWritersAndFollowers(t *testing.T) {
	s := openMemory(t)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	const writers, each, followers = 8, 25, 4
	var fw sync.WaitGroup
	errs := make(chan error, followers+writers)
	for range followers {
		fw.Add(1)
		go func() {
			defer fw.Done()
			var next uint64 = 1
			for c, err := range s.Follow(ctx, events.FollowOptions{}) {
				if err != nil || c.Seq != next || c.Err != nil || len(c.Events) != 1 {
					errs <- errors.Join(err, errors.New("follower saw a commit out of order or undecoded"))
					return
				}
				if next++; next > writers*each {
					return
				}
			}
		}()
	}
	var ww sync.WaitGroup
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			subj := events.MustSubject("main", events.AggTurn, string(rune('a'+w)))
			for range each {
				ev := events.New("main", "k", t0, events.TurnSucceeded{TurnID: "k", Attempts: 1})
				if _, err := s.Append(ctx, subj, events.AnySeq, ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	ww.Wait()
	fw.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
