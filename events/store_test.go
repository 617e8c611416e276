package events_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

func TestAppend_DecisionReadBackWhole(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	evs := failure("turn-1", 1)
	res, err := s.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	if res.Seq != 1 || res.Duplicate {
		t.Fatalf("result %+v, want seq 1, not duplicate", res)
	}
	got, last, err := s.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if last != 1 || len(got) != 2 {
		t.Fatalf("read %d events up to %d, want 2 up to 1", len(got), last)
	}
	for i, ev := range got {
		if cur, _ := events.NewCatalogRegistry().Version(ev.Type); ev.ID != evs[i].ID || ev.Seq != 1 || ev.Index != i || ev.SchemaVersion != cur {
			t.Fatalf("event %d: %+v", i, ev.Envelope)
		}
		if !reflect.DeepEqual(ev.Data, evs[i].Data) {
			t.Fatalf("event %d data %#v, want %#v", i, ev.Data, evs[i].Data)
		}
		if !ev.At.Equal(t0) || ev.At.Location().String() != "UTC" {
			t.Fatalf("event %d at %v", i, ev.At)
		}
	}
	if got[1].CausationID != evs[0].ID || got[1].CorrelationID != "turn-1" {
		t.Fatalf("causation/correlation not kept: %+v", got[1].Envelope)
	}
	last, err = s.LastSeq(ctx, profileSubj)
	testutil.NoError(t, err)
	if last != 1 {
		t.Fatalf("LastSeq(subject) = %d, want 1", last)
	}
	other := events.MustSubject("main", events.AggProfile, "nobody")
	if last, err = s.LastSeq(ctx, other); err != nil || last != 0 {
		t.Fatalf("LastSeq(empty subject) = %d, %v; want 0, nil", last, err)
	}
	if got, last, err := s.ReadSubject(ctx, other); err != nil || len(got) != 0 || last != 0 {
		t.Fatalf("ReadSubject(empty subject) = %d events, %d, %v", len(got), last, err)
	}
}

func TestAppend_StaleExpectationIsTypedConflict(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	_, err := s.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	_, err = s.Append(ctx, profileSubj, 0, failure("turn-2", 1)...)
	testutil.ErrorIs(t, err, events.ErrConflict)
	var ce *events.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not a *ConflictError", err)
	}
	if ce.Code != events.CodeWrongLastSequence || !ce.ActualKnown || ce.Actual != 1 || ce.Expected != 0 || ce.Guard != profileSubj {
		t.Fatalf("conflict %+v", ce)
	}
	// No expectation at all: stored whatever the subject holds.
	res, err := s.Append(ctx, profileSubj, events.AnySeq, failure("turn-3", 1)...)
	testutil.NoError(t, err)
	if res.Seq != 2 {
		t.Fatalf("AnySeq append stored at %d, want 2", res.Seq)
	}
}

func TestAppend_EightWritersWithRetryLoseNothing(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	const writers, each = 8, 50
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[string]bool{}
		errs = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := events.New("main", "openai:user@example.com", t0,
					events.ProfileCleared{ProfileID: "openai:user@example.com", By: fmt.Sprintf("w%d-%d", w, i)})
				for try := 0; ; try++ {
					last, err := s.LastSeq(ctx, profileSubj) // reload
					if err != nil {
						errs <- err
						return
					}
					_, err = s.Append(ctx, profileSubj, last, ev)
					if err == nil {
						break
					}
					if !errors.Is(err, events.ErrConflict) || try > 10000 {
						errs <- err
						return
					}
				}
				mu.Lock()
				ids[ev.ID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, last, err := s.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if len(got) != writers*each || last != writers*each {
		t.Fatalf("%d events up to seq %d, want %d", len(got), last, writers*each)
	}
	for i, ev := range got {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d: sequences not contiguous", i, ev.Seq)
		}
		if !ids[ev.ID] {
			t.Fatalf("event %s at seq %d was not acknowledged to any writer", ev.ID, ev.Seq)
		}
		delete(ids, ev.ID)
	}
	if len(ids) != 0 {
		t.Fatalf("%d acknowledged events missing", len(ids))
	}
}

func TestAppend_SameCommitTwiceIsStoredOnce(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	evs := failure("turn-1", 1)
	first, err := s.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	// Re-sent with the same expectation (a client retrying after a lost ack).
	again, err := s.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	if !again.Duplicate || again.Seq != first.Seq {
		t.Fatalf("re-send with expectation: %+v, want duplicate of seq %d", again, first.Seq)
	}
	// Re-sent with no expectation.
	again, err = s.Append(ctx, profileSubj, events.AnySeq, evs...)
	testutil.NoError(t, err)
	if !again.Duplicate || again.Seq != first.Seq {
		t.Fatalf("re-send without expectation: %+v, want duplicate of seq %d", again, first.Seq)
	}
	// Re-sent after another commit moved the subject on.
	_, err = s.Append(ctx, profileSubj, 1, failure("turn-2", 1)...)
	testutil.NoError(t, err)
	again, err = s.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	if !again.Duplicate || again.Seq != first.Seq {
		t.Fatalf("late re-send: %+v, want duplicate of seq %d", again, first.Seq)
	}
	last, err := s.LastSeq(ctx, "")
	testutil.NoError(t, err)
	if last != 2 {
		t.Fatalf("stream last seq %d, want 2", last)
	}
}

func TestAppend_DecisionIsNeverSeenHalfWritten(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	const commits, size = 40, 5
	subj := events.MustSubject("main", events.AggTurn, "turn-x")

	seen := make(chan map[uint64]int, 1)
	go func() { // a live reader, watching while the writer appends
		counts := map[uint64]int{}
		total := 0
		for ev, err := range s.Watch(ctx, 1) {
			if err != nil {
				t.Error(err)
				break
			}
			if ev.Index != counts[ev.Seq] {
				t.Errorf("seq %d: event index %d after %d events", ev.Seq, ev.Index, counts[ev.Seq])
			}
			counts[ev.Seq]++
			if total++; total == commits*size {
				break
			}
		}
		seen <- counts
	}()
	var last uint64
	for c := range commits {
		evs := make([]events.Event, size)
		for i := range evs {
			evs[i] = events.New("main", "turn-x", t0, events.AttemptStarted{TurnID: "turn-x", Attempt: c*size + i + 1,
				Provider: "openai", Model: "gpt-5", Kind: "first"})
		}
		res, err := s.Append(ctx, subj, last, evs...)
		testutil.NoError(t, err)
		last = res.Seq
		// A reader between two appends sees whole commits only.
		got, _, err := s.ReadSubject(ctx, subj)
		testutil.NoError(t, err)
		if len(got) != (c+1)*size {
			t.Fatalf("after commit %d read %d events, want %d", c, len(got), (c+1)*size)
		}
	}
	counts := <-seen
	if len(counts) != commits {
		t.Fatalf("watch saw %d commits, want %d", len(counts), commits)
	}
	for seq, n := range counts {
		if n != size {
			t.Fatalf("commit at seq %d seen with %d of %d events", seq, n, size)
		}
	}
	// Read (the replay path) sees the same.
	n := 0
	for ev, err := range s.Read(ctx, 0) {
		testutil.NoError(t, err)
		if ev.Index != n%size {
			t.Fatalf("read: event %d has index %d", n, ev.Index)
		}
		n++
	}
	if n != commits*size {
		t.Fatalf("Read gave %d events, want %d", n, commits*size)
	}
}

func TestRestart_KeepsEveryEvent(t *testing.T) {
	dir := t.TempDir()
	ctx := testutil.Context(t)
	s, err := events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	var want []string
	var last uint64
	for i := range 10 {
		evs := failure(fmt.Sprintf("turn-%d", i), i+1)
		res, err := s.Append(ctx, profileSubj, last, evs...)
		testutil.NoError(t, err)
		last = res.Seq
		want = append(want, evs[0].ID, evs[1].ID)
	}
	testutil.NoError(t, s.Close())

	s, err = events.Open(ctx, events.WithDataDir(dir))
	testutil.NoError(t, err)
	defer s.Close()
	got, last2, err := s.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if last2 != last || len(got) != len(want) {
		t.Fatalf("after restart %d events up to %d, want %d up to %d", len(got), last2, len(want), last)
	}
	for i := range got {
		if got[i].ID != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got[i].ID, want[i])
		}
	}
	// And the store keeps going where it stopped.
	_, err = s.Append(ctx, profileSubj, last, failure("turn-after", 1)...)
	testutil.NoError(t, err)
}

func TestOpen_SecondOpenOfSameDirIsRefused(t *testing.T) {
	_, dir := testutil.OpenStore(t)
	_, err := events.Open(testutil.Context(t), events.WithDataDir(dir))
	testutil.ErrorIs(t, err, events.ErrLocked)
	abs, _ := filepath.Abs(dir)
	if !strings.Contains(err.Error(), abs) {
		t.Fatalf("error %q does not name the directory %s", err, abs)
	}
}

// unregistered is a payload type no registry knows.
type unregistered struct{}

func (unregistered) EventType() string                { return "Unregistered" }
func (unregistered) EventAggregate() events.Aggregate { return events.AggProfile }

func TestRead_UndecodableMessageIsAnErrorNamingItsSequence(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	js, err := jetstream.New(events.ConnOf(s))
	testutil.NoError(t, err)
	_, err = js.Publish(ctx, profileSubj, []byte("not json"))
	testutil.NoError(t, err)
	_, err = js.Publish(ctx, profileSubj, []byte(`{"events":[{"id":"x","type":"Martian","schema_version":1,"payload":{}}]}`))
	testutil.NoError(t, err)
	_, err = s.Append(ctx, profileSubj, 2, failure("turn-1", 1)...)
	testutil.NoError(t, err)

	// ReadSubject skips them (quarantined), and its last sequence counts
	// them, so an append guarded by the subject expects the real last one.
	evs, last, err := s.ReadSubject(ctx, profileSubj)
	if err != nil || len(evs) != 2 || evs[0].Seq != 3 || last != 3 {
		t.Fatalf("ReadSubject: %d events, last %d, %v; want the 2 events of seq 3", len(evs), last, err)
	}
	var de *events.DecodeError

	var decodeSeqs []uint64
	var good int
	for _, err := range s.Read(ctx, 1) {
		if err != nil {
			testutil.ErrorIs(t, err, events.ErrDecode)
			errors.As(err, &de)
			decodeSeqs = append(decodeSeqs, de.Seq)
			if de.Seq == 2 && (!errors.Is(err, events.ErrUnknownType) || !strings.Contains(err.Error(), "Martian")) {
				t.Fatalf("seq 2 error %v does not name the unknown type", err)
			}
			continue
		}
		good++
	}
	if !reflect.DeepEqual(decodeSeqs, []uint64{1, 2}) || good != 2 {
		t.Fatalf("read errors at %v and %d good events, want errors at [1 2] and 2 events", decodeSeqs, good)
	}
}

func TestAppendGuarded_WildcardGuardSerialisesAllProfiles(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	guard, err := events.AggregateFilter("main", events.AggProfile)
	testutil.NoError(t, err)
	p1 := events.MustSubject("main", events.AggProfile, "openai:a@example.com")
	p2 := events.MustSubject("main", events.AggProfile, "openai:b@example.com")
	clear := func(id string) events.Event {
		return events.New("main", id, t0, events.ProfileCleared{ProfileID: id})
	}
	_, err = s.AppendGuarded(ctx, p1, guard, 0, clear("openai:a@example.com"))
	testutil.NoError(t, err)
	_, err = s.AppendGuarded(ctx, p2, guard, 0, clear("openai:b@example.com"))
	testutil.ErrorIs(t, err, events.ErrConflict)
	_, last, err := s.ReadSubject(ctx, guard)
	testutil.NoError(t, err)
	_, err = s.AppendGuarded(ctx, p2, guard, last, clear("openai:b@example.com"))
	testutil.NoError(t, err)
}

func TestOpen_ByURLSharesTheStream(t *testing.T) {
	embedded, dir := testutil.OpenStore(t, events.WithListen(0))
	url := embedded.ClientURL()
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("ClientURL %q is not loopback", url)
	}
	ctx := testutil.Context(t)
	writer := events.WithListenerCredentials(dir, events.ReadWrite)
	remote, err := events.Open(ctx, events.WithURL(url), writer)
	testutil.NoError(t, err)
	defer remote.Close()
	_, err = remote.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	got, last, err := embedded.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if len(got) != 2 || last != 1 {
		t.Fatalf("embedded side read %d events up to %d", len(got), last)
	}
	// A store whose guarantees need a longer duplicate window than the
	// stream has (a 90 s timeout needs 3 min) refuses to use it, naming it.
	_, err = events.Open(ctx, events.WithURL(url), writer, events.WithTimeout(90*time.Second), events.WithDuplicateWindow(3*time.Minute))
	testutil.ErrorIs(t, err, events.ErrStreamConfig)
	if !strings.Contains(err.Error(), "duplicate window 2m0s (want at least 3m0s") {
		t.Fatalf("error %q does not say what differs", err)
	}
	// Settings that are the operator's choice are accepted as they are: a
	// longer window asked for, or another replica count (logged).
	var logs strings.Builder
	other, err := events.Open(ctx, events.WithURL(url), writer, events.WithDuplicateWindow(7*time.Minute),
		events.WithReplicas(3), events.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	testutil.NoError(t, err)
	other.Close()
	if !strings.Contains(logs.String(), "replicas=1 asked=3") {
		t.Fatalf("replica difference not logged: %q", logs.String())
	}
}

func TestOpen_DataDirLayout(t *testing.T) {
	_, dir := testutil.OpenStore(t)
	for _, p := range []string{"fledger.lock", "jetstream"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Fatalf("data dir lacks %s: %v", p, err)
		}
	}
}
