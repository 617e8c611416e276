package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// The store conformance suite: the [events.Store] contract (its interface
// documentation) checked with exact values, on every kind of store
// fledger runs on (backends, conformance_backend_test.go).
//
// Each case opens its own store and works on its own agent's subjects.
// The stream may hold earlier cases' commits (the cluster backend keeps
// one stream: recreating a replicated stream right after deleting it
// sometimes waits a whole raft election timeout for its first leader), so
// sequences are checked relative to the stream's last sequence when the
// case starts ([env.seq]).

// TestConformance runs every case on every backend.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { runConformance(t, b.setup(t)) })
	}
}

// confCase is one case of the suite.
type confCase struct {
	name string
	run  func(*testing.T, env)
	// opts are the case's own store options.
	opts []events.Option
}

// jetstreamOnly are the cases inherently about JetStream, skipped on the
// other backends, with why.
var jetstreamOnly = map[string]string{
	"ForeignMessage": "publishes messages fledger did not write straight to the stream over NATS",
}

// The cases, in the order they run: first while the stream is empty,
// then in each commit mode, then once; ForeignMessage last, since it
// leaves foreign messages in the stream.
var (
	confFirst = []confCase{
		{name: "LedgerOfAnEmptyStore", run: confLedgerEmpty},
		{name: "LastSeq", run: confLastSeq},
	}
	confPerMode = []confCase{
		{name: "AppendStoresOneCommitAsOneMessage", run: confAppendOneMessage},
		{name: "Expectations", run: confExpectations},
		{name: "ConflictCodesUnderContention", run: confContentionCodes},
		{name: "WildcardGuards", run: confWildcardGuards},
		{name: "ReSentCommitIsDuplicate", run: confResend},
		{name: "ConcurrentReSends", run: confConcurrentResends},
		{name: "SharedMsgIDIsTaken", run: confTaken},
		{name: "ConcurrentDistinctSubjects", run: confConcurrentDistinct},
		{name: "ConcurrentOneGuardedSubject", run: confConcurrentGuarded},
	}
	confOnce = []confCase{
		{name: "RefusesBadEventsBeforeStoring", run: confRefusesBadEvents,
			opts: []events.Option{events.WithMaxCommitBytes(4096), events.WithMaxEventsPerCommit(4)}},
		{name: "ReadSubject", run: confReadSubject},
		{name: "Read", run: confRead},
		{name: "Watch", run: confWatch},
		{name: "Follow", run: confFollow},
		{name: "FollowDecodeFilter", run: confFollowDecode},
		{name: "CursorAckAdvances", run: confCursorAck},
		{name: "CursorResumesByName", run: confCursorResume},
		{name: "CursorNakRedeliversFirst", run: confCursorNak},
		{name: "CursorBatchBoundsUnacked", run: confCursorBatch},
		{name: "CursorRedeliversAfterAckWait", run: confCursorAckWait},
		{name: "CursorOptionsAreChecked", run: confCursorOptions},
		{name: "CursorKeepMovesOrRefuses", run: confCursorKeep},
		{name: "CursorKeepBusyReader", run: confCursorKeepBusy},
		{name: "CursorReplacedUnderReader", run: confCursorReplaced},
		{name: "Ledger", run: confLedger},
		{name: "ClosedStore", run: confClosed},
		{name: "ForeignMessage", run: confForeign},
	}
)

func runConformance(t *testing.T, b backend) {
	n := 0
	run := func(t *testing.T, m mode, cs []confCase) {
		t.Helper()
		for _, c := range cs {
			n++
			agent := fmt.Sprintf("a%02d", n)
			t.Run(c.name, func(t *testing.T) {
				if why, only := jetstreamOnly[c.name]; only && !b.jetstream {
					t.Skip("JetStream only: " + why)
				}
				s := b.open(t, append([]events.Option{events.WithGroupCommit(m.groupCommit)}, c.opts...)...)
				base, err := s.LastSeq(testutil.Context(t), "")
				testutil.NoError(t, err)
				c.run(t, env{s: s, agent: agent, base: base, replicas: replicasOf(t, s), mode: m, backend: b})
			})
		}
	}
	run(t, b.modes[0], confFirst)
	if len(b.modes) == 1 {
		run(t, b.modes[0], confPerMode)
	} else {
		for _, m := range b.modes {
			t.Run(m.name, func(t *testing.T) { run(t, m, confPerMode) })
		}
	}
	run(t, b.modes[0], confOnce)
}

// mode is the store's options a case runs with.
type mode struct {
	name        string
	groupCommit bool
}

// env is a case's store and place in the stream.
type env struct {
	s        events.Store
	agent    string // the case's own agent: its subjects are its own
	base     uint64 // the stream's last sequence when the case started
	replicas int
	mode
	backend
}

// seq is the stream sequence of the case's k-th message.
func (e env) seq(k int) uint64 { return e.base + uint64(k) }

func (e env) subj(agg events.Aggregate, key string) string {
	return events.MustSubject(e.agent, agg, key)
}

// profile is the case's main profile id and its subject.
const profileID = "openai:user@example.com"

func (e env) profile() string { return e.subj(events.AggProfile, profileID) }

func (e env) cleared(key, by string) events.Event {
	return events.New(e.agent, key, t0, events.ProfileCleared{ProfileID: key, By: by})
}

// failure is the helpers' two-event decision, for the case's agent:
// stored under e.profile().
func (e env) failure(turn string) []events.Event {
	evs := failure(turn, 1)
	for i := range evs {
		evs[i].Agent = e.agent
	}
	return evs
}

// rawMsg is the message stored at seq.
func (e env) rawMsg(t testing.TB, seq uint64) storedMsg {
	t.Helper()
	return e.look.msg(t, e.s, seq)
}

// storedCommit decodes the stored message at seq as a commit.
func (e env) storedCommit(t testing.TB, seq uint64) (storedMsg, events.Commit) {
	t.Helper()
	m := e.rawMsg(t, seq)
	var c events.Commit
	if err := json.Unmarshal(m.Data, &c); err != nil || len(c.Events) == 0 {
		t.Fatalf("message %d is not a commit: %v", seq, err)
	}
	return m, c
}

// wantStream checks the stream holds exactly the case's k messages after
// its base: every one up to its last sequence.
func (e env) wantStream(t testing.TB, k int) {
	t.Helper()
	msgs, last := e.look.state(t, e.s)
	if last != e.seq(k) || msgs != e.seq(k) {
		t.Fatalf("stream holds %d messages up to %d, want %d up to %d (%d of this test)",
			msgs, last, e.seq(k), e.seq(k), k)
	}
}

// wantConflict checks err is the exact conflict a sequential append
// gets: code 10071 with the actual last sequence (on R1 and R3 alike).
func wantConflict(t testing.TB, err error, subject, guard string, expected, actual uint64) {
	t.Helper()
	if !errors.Is(err, events.ErrConflict) {
		t.Fatalf("error %v, want a conflict", err)
	}
	var ce *events.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T is not a *ConflictError", err)
	}
	want := events.ConflictError{Subject: subject, Guard: guard, Expected: expected, Actual: actual, ActualKnown: true,
		Code: events.CodeWrongLastSequence}
	if *ce != want {
		t.Fatalf("conflict %+v, want %+v", *ce, want)
	}
}

// wantResult checks an append's result field by field.
func wantResult(t testing.TB, res events.AppendResult, seq uint64, dup, taken bool) {
	t.Helper()
	if res.Seq != seq || res.Duplicate != dup || res.Taken != taken {
		t.Fatalf("result seq %d duplicate %v taken %v, want seq %d duplicate %v taken %v",
			res.Seq, res.Duplicate, res.Taken, seq, dup, taken)
	}
	// The events of the commit stored, unless another one took the id.
	if taken && res.Events != nil {
		t.Fatalf("taken result carries %d events", len(res.Events))
	}
	if !taken && len(res.Events) == 0 {
		t.Fatalf("result carries no events")
	}
	for i, ev := range res.Events {
		if ev.Seq != seq || ev.Index != i {
			t.Fatalf("result event %d at seq %d index %d, want %d %d", i, ev.Seq, ev.Index, seq, i)
		}
	}
}

// catalog gives the schema version events are written with.
var catalog = events.NewCatalogRegistry()

// sameEvent compares a read event with the one written, and its position.
func sameEvent(t testing.TB, got, sent events.Event, seq uint64, index int, basis uint64) {
	t.Helper()
	version, _ := catalog.Version(sent.Type)
	if got.ID != sent.ID || got.Type != sent.Type || got.SchemaVersion != version || version < 1 || !got.At.Equal(sent.At) ||
		got.At.Location().String() != "UTC" || got.Agent != sent.Agent || got.Aggregate != sent.Aggregate || got.Key != sent.Key ||
		got.CausationID != sent.CausationID || got.CorrelationID != sent.CorrelationID {
		t.Fatalf("event envelope %+v, want %+v", got.Envelope, sent.Envelope)
	}
	if !reflect.DeepEqual(got.Data, sent.Data) {
		t.Fatalf("event data %#v, want %#v", got.Data, sent.Data)
	}
	if got.Seq != seq || got.Index != index || got.Basis != basis {
		t.Fatalf("event %s at seq %d index %d basis %d, want %d %d %d", got.ID, got.Seq, got.Index, got.Basis, seq, index, basis)
	}
}

func confLastSeq(t *testing.T, e env) {
	ctx := testutil.Context(t)
	all, err := events.AggregateFilter(e.agent, events.AggProfile)
	testutil.NoError(t, err)
	turns, err := events.AggregateFilter(e.agent, events.AggTurn)
	testutil.NoError(t, err)
	check := func(filter string, want uint64) {
		t.Helper()
		got, err := e.s.LastSeq(ctx, filter)
		testutil.NoError(t, err)
		if got != want {
			t.Fatalf("LastSeq(%q) = %d, want %d", filter, got, want)
		}
	}
	if e.base != 0 {
		t.Fatalf("the first subtest's stream has %d messages", e.base)
	}
	check("", 0)
	check(e.profile(), 0)
	check(all, 0)
	appendN(t, e, e.profile(), profileID, 2)
	appendN(t, e, e.subj(events.AggTurn, "t"), "t", 1)
	check("", 3)
	check(e.profile(), 2)
	check(all, 2)
	check(turns, 3)
	check(e.subj(events.AggProfile, "none"), 0)
	_, err = e.s.LastSeq(ctx, "nats.>")
	testutil.ErrorIs(t, err, events.ErrInvalidSubject)
}

func confAppendOneMessage(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	evs := e.failure("turn-1")
	res, err := s.Append(ctx, e.profile(), 0, evs...)
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), false, false)
	if len(res.Events) != 2 {
		t.Fatalf("result carries %d events, want 2", len(res.Events))
	}
	for i := range evs {
		sameEvent(t, res.Events[i], evs[i], e.seq(1), i, 0)
	}
	// One message, under the subject, with the first event's id as its
	// message id, holding both events.
	m, c := e.storedCommit(t, e.seq(1))
	if m.Subject != e.profile() || m.Header.Get(jetstream.MsgIDHeader) != evs[0].ID {
		t.Fatalf("message: subject %s id %q", m.Subject, m.Header.Get(jetstream.MsgIDHeader))
	}
	if len(c.Events) != 2 || c.Events[0].ID != evs[0].ID || c.Events[1].ID != evs[1].ID || c.Basis != 0 {
		t.Fatalf("commit body %+v", c)
	}

	// AppendGuarded: stored under its subject, guarded by another.
	turn := e.subj(events.AggTurn, "turn-2")
	ok := events.New(e.agent, "turn-2", t0, events.TurnSucceeded{TurnID: "turn-2", Attempts: 1})
	res, err = s.AppendGuarded(ctx, turn, e.profile(), e.seq(1), ok)
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(2), false, false)
	sameEvent(t, res.Events[0], ok, e.seq(2), 0, 0)

	// AppendCommit with every setting: message id, basis, and urgent.
	step := events.New(e.agent, "turn-2", t0, events.TurnSucceeded{TurnID: "turn-2", Attempts: 2})
	id := e.agent + " turn-2 after 2"
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: turn, Expected: e.seq(2), MsgID: id, Basis: e.seq(2),
		Events: []events.Event{step}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(3), false, false)
	sameEvent(t, res.Events[0], step, e.seq(3), 0, e.seq(2))
	if got := e.rawMsg(t, e.seq(3)).Header.Get(jetstream.MsgIDHeader); got != id {
		t.Fatalf("message id %q, want the request's %q", got, id)
	}
	urgent := e.cleared(profileID, "urgent")
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: e.profile(), Expected: e.seq(1), Urgent: true, Events: []events.Event{urgent}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), false, false)

	e.wantStream(t, 4)
	got, last, err := s.ReadSubject(ctx, e.profile())
	testutil.NoError(t, err)
	if last != e.seq(4) || len(got) != 3 {
		t.Fatalf("ReadSubject: %d events up to %d, want 3 up to %d", len(got), last, e.seq(4))
	}
	sameEvent(t, got[0], evs[0], e.seq(1), 0, 0)
	sameEvent(t, got[1], evs[1], e.seq(1), 1, 0)
	sameEvent(t, got[2], urgent, e.seq(4), 0, 0)
}

func confExpectations(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	other := e.subj(events.AggProfile, "other")
	// 0: the subject has no message yet.
	res, err := s.Append(ctx, p, 0, e.cleared(profileID, "1"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), false, false)
	_, err = s.Append(ctx, p, 0, e.cleared(profileID, "stale 0"))
	wantConflict(t, err, p, p, 0, e.seq(1))
	// Exact.
	res, err = s.Append(ctx, p, e.seq(1), e.cleared(profileID, "2"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(2), false, false)
	_, err = s.Append(ctx, p, e.seq(1), e.cleared(profileID, "stale 1"))
	wantConflict(t, err, p, p, e.seq(1), e.seq(2))
	_, err = s.Append(ctx, p, e.seq(7), e.cleared(profileID, "ahead"))
	wantConflict(t, err, p, p, e.seq(7), e.seq(2))
	// Another subject's expectation is its own: 0, though the stream has more.
	res, err = s.Append(ctx, other, 0, e.cleared("other", "3"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(3), false, false)
	// AnySeq: no expectation.
	res, err = s.Append(ctx, p, events.AnySeq, e.cleared(profileID, "4"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), false, false)
	res, err = s.Append(ctx, other, events.AnySeq, e.cleared("other", "5"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(5), false, false)
	// The subject's expectation is its own last sequence, not the stream's.
	_, err = s.Append(ctx, p, e.seq(5), e.cleared(profileID, "stream's last"))
	wantConflict(t, err, p, p, e.seq(5), e.seq(4))
	res, err = s.Append(ctx, p, e.seq(4), e.cleared(profileID, "6"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(6), false, false)
	// Conflicts stored nothing.
	e.wantStream(t, 6)
}

// confContentionCodes sends rounds of 16 appends with one expectation at
// once: exactly one is stored per round, every other gets a conflict. A
// conflict answered while the winner is being replicated is 10164 on a
// replicated stream (no actual sequence); once it is stored, 10071 with
// the winner's sequence. An R1 stream answers 10071 only. The group
// committer holds a message whose guard it is writing until the write is
// answered, so with it every conflict is 10071.
func confContentionCodes(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	const writers = 16
	codes := map[int]int{}
	deadline := time.Now().Add(5 * time.Second)
	var last uint64
	for round := 0; ; round++ {
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			ress  = make([]events.AppendResult, writers)
			errs  = make([]error, writers)
		)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ress[w], errs[w] = s.Append(ctx, p, last, e.cleared(profileID, fmt.Sprint(round, "/", w)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for w := range writers {
			if errs[w] == nil {
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both stored with expectation %d", round, winner, w, last)
				}
				winner = w
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody stored with expectation %d: %v", round, last, errs[0])
		}
		won := ress[winner]
		if won.Duplicate || won.Seq != e.seq(round+1) {
			t.Fatalf("round %d: winner %+v, want seq %d", round, won, e.seq(round+1))
		}
		for w, err := range errs {
			if w == winner {
				continue
			}
			var ce *events.ConflictError
			if !errors.As(err, &ce) || !errors.Is(err, events.ErrConflict) {
				t.Fatalf("round %d writer %d: %v, want a *ConflictError", round, w, err)
			}
			codes[ce.Code]++
			switch {
			case ce.Code == events.CodeWrongLastSequence:
				if !ce.ActualKnown || ce.Actual != won.Seq {
					t.Fatalf("round %d: %+v, want actual %d known", round, *ce, won.Seq)
				}
			case ce.Code == events.CodeWrongLastSequenceConstant && e.replicas > 1 && !e.groupCommit:
				// The server does not say the actual sequence; the store
				// asks the leader and fills it when it has moved.
				if ce.ActualKnown && ce.Actual != won.Seq || !ce.ActualKnown && ce.Actual != 0 {
					t.Fatalf("round %d: 10164 %+v, want actual %d or unknown", round, *ce, won.Seq)
				}
			default:
				t.Fatalf("round %d: conflict code %d on R%d (group commit %v): %v", round, ce.Code, e.replicas, e.groupCommit, err)
			}
			if ce.Expected != last || ce.Guard != p || ce.Subject != p {
				t.Fatalf("round %d: %+v", round, *ce)
			}
		}
		last = won.Seq
		// On R3 without group commit, go on until 10164 was seen once.
		if e.replicas == 1 || e.groupCommit || codes[events.CodeWrongLastSequenceConstant] > 0 {
			if round >= 4 {
				e.wantStream(t, round+1)
				break
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("R%d: no conflict answered 10164 in %d rounds of %d (codes %v)", e.replicas, round+1, writers, codes)
		}
	}
	t.Logf("R%d, group commit %v: conflicts by code %v", e.replicas, e.groupCommit, codes)
}

func confWildcardGuards(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	const p, q = "openai:a@example.com", "openai:b@example.com"
	g, err := events.ProfileGuardsOf(e.agent, p)
	testutil.NoError(t, err)
	og, err := events.ProfileGuardsOf(e.agent, q)
	testutil.NoError(t, err)
	reset := func(by string) events.Event {
		return events.New(e.agent, p, t0, events.ProfileSucceeded{ProfileID: p, Provider: "openai", LastUsed: events.Millis(t0), TurnID: by})
	}
	// A failure guarded by every subject of the profile.
	res, err := s.AppendGuarded(ctx, g.Failures, g.AnyOf, 0, e.cleared(p, "f1"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), false, false)
	// A reset guarded by the failures only.
	res, err = s.AppendGuarded(ctx, g.Resets, g.Failures, e.seq(1), reset("r1"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(2), false, false)
	// Two resets on the same read do not conflict.
	res, err = s.AppendGuarded(ctx, g.Resets, g.Failures, e.seq(1), reset("r2"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(3), false, false)
	// A failure decided on the state before the resets does.
	_, err = s.AppendGuarded(ctx, g.Failures, g.AnyOf, e.seq(1), e.cleared(p, "stale"))
	wantConflict(t, err, g.Failures, g.AnyOf, e.seq(1), e.seq(3))
	// Another profile's guard is untouched.
	res, err = s.AppendGuarded(ctx, og.Failures, og.AnyOf, 0, e.cleared(q, "other"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), false, false)
	for _, c := range []struct {
		filter string
		last   uint64
	}{{g.AnyOf, e.seq(3)}, {g.Failures, e.seq(1)}, {g.Resets, e.seq(3)}, {og.AnyOf, e.seq(4)}} {
		last, err := s.LastSeq(ctx, c.filter)
		testutil.NoError(t, err)
		_, read, err := s.ReadSubject(ctx, c.filter)
		testutil.NoError(t, err)
		if last != c.last || read != c.last {
			t.Fatalf("%s: LastSeq %d, ReadSubject's last %d, want %d", c.filter, last, read, c.last)
		}
	}
	res, err = s.AppendGuarded(ctx, g.Failures, g.AnyOf, e.seq(3), e.cleared(p, "f2"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(5), false, false)
	// A '>' filter guards a whole aggregate.
	all, err := events.AggregateFilter(e.agent, events.AggProfile)
	testutil.NoError(t, err)
	_, err = s.AppendGuarded(ctx, og.Failures, all, e.seq(4), e.cleared(q, "stale"))
	wantConflict(t, err, og.Failures, all, e.seq(4), e.seq(5))
	res, err = s.AppendGuarded(ctx, og.Failures, all, e.seq(5), e.cleared(q, "b2"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(6), false, false)
	// A guard that is no fledger filter is refused before publishing.
	_, err = s.AppendGuarded(ctx, g.Failures, "other.>", 0, e.cleared(p, "x"))
	testutil.ErrorIs(t, err, events.ErrInvalidSubject)
	e.wantStream(t, 6)
}

func confResend(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	evs := e.failure("turn-1")
	first, err := s.Append(ctx, p, 0, evs...)
	testutil.NoError(t, err)
	wantResult(t, first, e.seq(1), false, false)
	// The same commit again (a client retrying after a lost ack): with
	// its expectation, and without any.
	again, err := s.Append(ctx, p, 0, evs...)
	testutil.NoError(t, err)
	wantResult(t, again, e.seq(1), true, false)
	again, err = s.Append(ctx, p, events.AnySeq, evs...)
	testutil.NoError(t, err)
	wantResult(t, again, e.seq(1), true, false)
	// After a later commit moved the guard: the server checks the
	// expectation first (a conflict), the store finds its own id.
	later, err := s.Append(ctx, p, e.seq(1), e.failure("turn-2")...)
	testutil.NoError(t, err)
	wantResult(t, later, e.seq(2), false, false)
	again, err = s.Append(ctx, p, 0, evs...)
	testutil.NoError(t, err)
	wantResult(t, again, e.seq(1), true, false)

	// The same with a wildcard guard moved by another subject.
	g, err := events.ProfileGuardsOf(e.agent, "openai:a@example.com")
	testutil.NoError(t, err)
	f := e.cleared("openai:a@example.com", "f")
	res, err := s.AppendGuarded(ctx, g.Failures, g.AnyOf, 0, f)
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(3), false, false)
	reset := events.New(e.agent, "openai:a@example.com", t0, events.ProfileSucceeded{ProfileID: "openai:a@example.com", Provider: "openai"})
	res, err = s.AppendGuarded(ctx, g.Resets, g.Failures, e.seq(3), reset)
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), false, false)
	res, err = s.AppendGuarded(ctx, g.Failures, g.AnyOf, 0, f)
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(3), true, false)
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: g.Resets, Guard: g.Failures, Expected: e.seq(3), Events: []events.Event{reset}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), true, false)

	e.wantStream(t, 4)
	var ids []string
	for ev, err := range s.Read(ctx, e.seq(1)) {
		testutil.NoError(t, err)
		ids = append(ids, ev.ID)
	}
	if want := []string{evs[0].ID, evs[1].ID, later.Events[0].ID, later.Events[1].ID, f.ID, reset.ID}; !slices.Equal(ids, want) {
		t.Fatalf("stream events %v, want %v", ids, want)
	}
}

// confConcurrentResends sends one commit from 8 goroutines at once, as
// writers re-sending after an unknown outcome do: it is stored once, and
// every send is answered with its sequence. Then 8 writers deciding one
// step race with their own commits under the step's message id: one is
// stored, the others are Taken.
func confConcurrentResends(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	const senders = 8
	for round := range 4 {
		shared := round%2 == 1
		turn := fmt.Sprint("turn-", round)
		same := e.failure(turn)
		commit := make([][]events.Event, senders)
		for i := range commit {
			commit[i] = same
			if shared {
				commit[i] = e.failure(turn) // other ids: another writer's decision
			}
		}
		expected := e.seq(round)
		if round == 0 {
			expected = 0
		}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			ress  = make([]events.AppendResult, senders)
			errs  = make([]error, senders)
		)
		for i := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req := events.AppendRequest{Subject: p, Expected: expected, Events: commit[i]}
				if shared {
					req.MsgID = e.agent + " " + turn + " after 0"
				}
				ress[i], errs[i] = s.AppendCommit(ctx, req)
			}()
		}
		close(start)
		wg.Wait()
		// Every send is checked (t.Errorf), so a failing round shows all
		// its answers; the next round goes on from the stream as it is.
		stored, failed := -1, false
		for i := range senders {
			switch {
			case errs[i] != nil:
				t.Errorf("round %d (shared id %v) sender %d: %v", round, shared, i, errs[i])
				failed = true
			case ress[i].Seq != e.seq(round+1):
				t.Errorf("round %d sender %d: %+v, want seq %d", round, i, ress[i], e.seq(round+1))
				failed = true
			case !ress[i].Duplicate:
				if stored >= 0 {
					t.Errorf("round %d: senders %d and %d both stored", round, stored, i)
				}
				stored = i
			}
		}
		if stored < 0 {
			if !failed {
				t.Errorf("round %d: every send answered duplicate", round)
			}
			t.FailNow()
		}
		for i := range senders {
			if taken := shared && i != stored; errs[i] == nil && ress[i].Taken != taken {
				t.Errorf("round %d (shared id %v) sender %d: taken %v, want %v", round, shared, i, ress[i].Taken, taken)
			}
		}
		if _, c := e.storedCommit(t, e.seq(round+1)); c.Events[0].ID != commit[stored][0].ID {
			t.Errorf("round %d: stored commit %s, answered as stored: %s", round, c.Events[0].ID, commit[stored][0].ID)
		}
	}
	e.wantStream(t, 4)
}

func confTaken(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	turn := e.subj(events.AggTurn, "turn-1")
	step := func(n int) events.Event {
		return events.New(e.agent, "turn-1", t0, events.TurnSucceeded{TurnID: "turn-1", Attempts: n})
	}
	mine, theirs := step(1), step(2)
	id := e.agent + " turn-1 after 0"
	res, err := s.AppendCommit(ctx, events.AppendRequest{Subject: turn, Expected: 0, MsgID: id, Events: []events.Event{mine}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), false, false)
	// Another writer deciding the same step: same id, other events.
	// Without an expectation the server de-duplicates it...
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: turn, Expected: events.AnySeq, MsgID: id, Events: []events.Event{theirs}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), true, true)
	// ...with its (now stale) expectation the store finds the id.
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: turn, Expected: 0, MsgID: id, Events: []events.Event{theirs}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), true, true)
	// The first writer re-sending its own commit is not Taken.
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: turn, Expected: 0, MsgID: id, Events: []events.Event{mine}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), true, false)
	// The id is shared across subjects too: the step's commit may be
	// stored under the profile.
	res, err = s.AppendCommit(ctx, events.AppendRequest{Subject: e.profile(), Guard: turn, Expected: 0, MsgID: id,
		Events: []events.Event{theirs}})
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(1), true, true)
	e.wantStream(t, 1)
	got, _, err := s.ReadSubject(ctx, turn)
	testutil.NoError(t, err)
	if len(got) != 1 {
		t.Fatalf("turn holds %d events, want 1", len(got))
	}
	sameEvent(t, got[0], mine, e.seq(1), 0, 0)
}

// confConcurrentDistinct: 16 writers, each chaining commits on its own
// subject with exact expectations; none conflicts, each result is exact,
// and the stream holds exactly what was acknowledged.
func confConcurrentDistinct(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	const writers, each = 16, 8
	type ack struct {
		id  string
		seq uint64
	}
	acks := make([][]ack, writers)
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			key := fmt.Sprint("w", w)
			subj := e.subj(events.AggTurn, key)
			var last uint64
			for i := range each {
				ev := events.New(e.agent, key, t0, events.TurnSucceeded{TurnID: key, Attempts: i + 1})
				res, err := s.AppendCommit(ctx, events.AppendRequest{Subject: subj, Expected: last, Basis: last, Events: []events.Event{ev}})
				if err != nil {
					errc <- fmt.Errorf("writer %d append %d: %w", w, i, err)
					return
				}
				if res.Duplicate || res.Taken || res.Seq <= max(last, e.base) || len(res.Events) != 1 || res.Events[0].ID != ev.ID ||
					res.Events[0].Seq != res.Seq || res.Events[0].Basis != last {
					errc <- fmt.Errorf("writer %d append %d: result %+v after %d", w, i, res, last)
					return
				}
				last = res.Seq
				acks[w] = append(acks[w], ack{ev.ID, res.Seq})
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	seqs := map[uint64]string{}
	for w := range writers {
		got, last, err := s.ReadSubject(ctx, e.subj(events.AggTurn, fmt.Sprint("w", w)))
		testutil.NoError(t, err)
		if len(got) != each || last != acks[w][each-1].seq {
			t.Fatalf("writer %d: read %d events up to %d, want %d up to %d", w, len(got), last, each, acks[w][each-1].seq)
		}
		for i, ev := range got {
			if ev.ID != acks[w][i].id || ev.Seq != acks[w][i].seq {
				t.Fatalf("writer %d event %d: %s at %d, acknowledged %s at %d", w, i, ev.ID, ev.Seq, acks[w][i].id, acks[w][i].seq)
			}
			if prev, dup := seqs[ev.Seq]; dup {
				t.Fatalf("seq %d acknowledged to %s and %s", ev.Seq, prev, ev.ID)
			}
			seqs[ev.Seq] = ev.ID
		}
	}
	e.wantStream(t, writers*each)
	st := events.GroupCommitStats(s)
	if e.groupCommit != (st.Single+st.Pipelined+st.Batches > 0) {
		t.Fatalf("group commit %v, flushes %+v", e.groupCommit, st)
	}
	t.Logf("group commit %v: %+v", e.groupCommit, st)
}

// confConcurrentGuarded: 16 writers on one subject, each reloading and
// retrying on conflict. Each commit records the expectation it was
// stored with (its basis): read back, each must expect its predecessor
// (exactly one winner per expectation), and the events are exactly the
// acknowledged ones.
func confConcurrentGuarded(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	const writers, each = 16, 4
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string]uint64{} // event id -> seq
		wins  = map[uint64]int{}    // expectation -> winners
		errc  = make(chan error, writers)
		start = make(chan struct{})
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				ev := e.cleared(profileID, fmt.Sprint(w, "/", i))
				for try := 0; ; try++ {
					last, err := s.LastSeq(ctx, p)
					if err != nil {
						errc <- err
						return
					}
					res, err := s.AppendCommit(ctx, events.AppendRequest{Subject: p, Expected: last, Basis: last, Events: []events.Event{ev}})
					if err == nil {
						if res.Duplicate {
							errc <- fmt.Errorf("writer %d: fresh commit answered duplicate: %+v", w, res)
							return
						}
						mu.Lock()
						acked[ev.ID] = res.Seq
						wins[last]++
						mu.Unlock()
						break
					}
					if !errors.Is(err, events.ErrConflict) || try > 1000 {
						errc <- fmt.Errorf("writer %d try %d: %w", w, try, err)
						return
					}
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	for exp, n := range wins {
		if n != 1 {
			t.Fatalf("%d commits stored with expectation %d", n, exp)
		}
	}
	got, last, err := s.ReadSubject(ctx, p)
	testutil.NoError(t, err)
	if len(got) != writers*each || last != e.seq(writers*each) {
		t.Fatalf("read %d events up to %d, want %d up to %d", len(got), last, writers*each, e.seq(writers*each))
	}
	var prev uint64
	for i, ev := range got {
		if ev.Seq != e.seq(i+1) || ev.Basis != prev {
			t.Fatalf("event %d at seq %d was stored expecting %d, want seq %d expecting %d", i, ev.Seq, ev.Basis, e.seq(i+1), prev)
		}
		if seq, ok := acked[ev.ID]; !ok || seq != ev.Seq {
			t.Fatalf("event %s at seq %d: acknowledged at %d (%v)", ev.ID, ev.Seq, seq, ok)
		}
		delete(acked, ev.ID)
		prev = ev.Seq
	}
	if len(acked) != 0 {
		t.Fatalf("%d acknowledged commits missing", len(acked))
	}
	e.wantStream(t, writers*each)
}

// confRefusesBadEvents: every event an append refuses is named (its type
// and field) before anything is stored, under the store's limits (the
// case's store is opened with 4 KiB and 4 events per commit).
func confRefusesBadEvents(t *testing.T, e env) {
	s, ctx := e.s, testutil.Context(t)
	profileSubj := e.profile()
	good := events.New(e.agent, "openai:user@example.com", t0, events.ProfileCleared{ProfileID: "openai:user@example.com"})

	mismatch := good
	mismatch.Type = "AttemptFailed"

	unknown := events.New(e.agent, "k", t0, unregistered{})

	raw := func(payload string) events.Event {
		ev := good
		ev.Data = nil
		ev.Payload = []byte(payload)
		return ev
	}
	big := events.New(e.agent, "turn-1", t0, events.NoticeSent{TurnID: "turn-1", Session: "s", Kind: "fallback",
		Text: strings.Repeat("x", 5000)})
	noKey := events.New(e.agent, "", t0, events.ProfileCleared{ProfileID: "p"})
	badSubject := events.New(e.agent, "p", t0, events.ProfileCleared{ProfileID: "p"})
	otherAgent := events.New(e.agent+"-other", "p", t0, events.ProfileCleared{ProfileID: "p"})

	nested := events.New(e.agent, "s", t0, events.SessionModelSelected{Session: "s", Model: events.ModelRef{Provider: "a", Model: "b"}, Source: "user"})
	nested.Data, nested.Payload = nil, []byte(`{"session":"s","model":{"provider":"a"},"source":"user"}`)

	cases := []struct {
		name     string
		subject  string
		evs      []events.Event
		sentinel error
		typ      string
		field    string
	}{
		{"payload of another type", profileSubj, []events.Event{mismatch}, events.ErrInvalidPayload, "AttemptFailed", "type"},
		{"unknown type", profileSubj, []events.Event{unknown}, events.ErrUnknownType, "Unregistered", "type"},
		{"unknown field", profileSubj, []events.Event{raw(`{"profile_id":"p","colour":"red"}`)}, events.ErrInvalidPayload, "ProfileCleared", "colour"},
		{"wrong field type", profileSubj, []events.Event{raw(`{"profile_id":42}`)}, events.ErrInvalidPayload, "ProfileCleared", "profile_id"},
		{"missing required field", profileSubj, []events.Event{raw(`{"by":"cli"}`)}, events.ErrInvalidPayload, "ProfileCleared", "profile_id"},
		{"missing nested required field", profileSubj, []events.Event{nested}, events.ErrInvalidPayload, "SessionModelSelected", "model.model"},
		{"oversize", profileSubj, []events.Event{good, big}, events.ErrTooLarge, "NoticeSent", "text"},
		{"empty key", profileSubj, []events.Event{noKey}, events.ErrInvalidEnvelope, "ProfileCleared", "key"},
		{"another agent's event", profileSubj, []events.Event{good, otherAgent}, events.ErrInvalidEnvelope, "ProfileCleared", "agent"},
		{"too many events", profileSubj, []events.Event{good, good, good, good, good}, events.ErrTooLarge, "", ""},
		{"no events", profileSubj, nil, events.ErrEmptyCommit, "", ""},
		{"wildcard subject", "fledger." + e.agent + ".profile.*", []events.Event{badSubject}, events.ErrInvalidSubject, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(ctx, tc.subject, events.AnySeq, tc.evs...)
			testutil.ErrorIs(t, err, tc.sentinel)
			var ee *events.EventError
			if tc.typ != "" || tc.field != "" {
				if !errors.As(err, &ee) {
					t.Fatalf("error %T (%v) is not an *EventError", err, err)
				}
				if ee.Type != tc.typ || ee.Field != tc.field {
					t.Fatalf("error names type %q field %q, want %q %q (%v)", ee.Type, ee.Field, tc.typ, tc.field, err)
				}
				if !strings.Contains(err.Error(), tc.typ) || !strings.Contains(err.Error(), tc.field) {
					t.Fatalf("message %q does not name type and field", err)
				}
			}
		})
	}
	e.wantStream(t, 0)
}

// appendN stores n single-event commits on subj (exact expectations)
// and returns the events as stored.
func appendN(t testing.TB, e env, subj, key string, n int) []events.Event {
	t.Helper()
	ctx := testutil.Context(t)
	last, err := e.s.LastSeq(ctx, subj)
	testutil.NoError(t, err)
	var out []events.Event
	for i := range n {
		res, err := e.s.Append(ctx, subj, last, e.cleared(key, fmt.Sprint(i)))
		testutil.NoError(t, err)
		out = append(out, res.Events...)
		last = res.Seq
	}
	return out
}

func confReadSubject(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	a := e.subj(events.AggProfile, "a")
	b := e.subj(events.AggProfile, "b")
	var wantA, wantB []events.Event
	for range 3 {
		wantA = append(wantA, appendN(t, e, a, "a", 1)...)
		wantB = append(wantB, appendN(t, e, b, "b", 1)...)
	}
	two := e.failure("turn-1") // a commit of two events, under e.profile()
	_, err := s.Append(ctx, e.profile(), 0, two...)
	testutil.NoError(t, err)

	got, last, err := s.ReadSubject(ctx, a)
	testutil.NoError(t, err)
	if last != e.seq(5) || len(got) != 3 {
		t.Fatalf("ReadSubject(a): %d events up to %d, want 3 up to %d", len(got), last, e.seq(5))
	}
	for i := range got {
		sameEvent(t, got[i], wantA[i], e.seq(2*i+1), 0, 0)
	}
	all, err := events.AggregateFilter(e.agent, events.AggProfile)
	testutil.NoError(t, err)
	got, last, err = s.ReadSubject(ctx, all)
	testutil.NoError(t, err)
	if last != e.seq(7) || len(got) != 8 {
		t.Fatalf("ReadSubject(%s): %d events up to %d, want 8 up to %d", all, len(got), last, e.seq(7))
	}
	for i := range 3 {
		sameEvent(t, got[2*i], wantA[i], e.seq(2*i+1), 0, 0)
		sameEvent(t, got[2*i+1], wantB[i], e.seq(2*i+2), 0, 0)
	}
	sameEvent(t, got[6], two[0], e.seq(7), 0, 0)
	sameEvent(t, got[7], two[1], e.seq(7), 1, 0)
	// Nothing under the filter: no events, last 0.
	got, last, err = s.ReadSubject(ctx, e.subj(events.AggTurn, "none"))
	if err != nil || got != nil || last != 0 {
		t.Fatalf("ReadSubject(empty) = %v, %d, %v; want nil, 0, nil", got, last, err)
	}
	_, _, err = s.ReadSubject(ctx, "other.subject")
	testutil.ErrorIs(t, err, events.ErrInvalidSubject)
}

// collect reads s from `from` to its end.
func collect(t testing.TB, s events.Store, from uint64) []events.Event {
	t.Helper()
	var out []events.Event
	for ev, err := range s.Read(testutil.Context(t), from) {
		testutil.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

func confRead(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	if got := collect(t, s, e.seq(1)); len(got) != 0 {
		t.Fatalf("read past the end: %d events", len(got))
	}
	var want []events.Event
	for i := range 5 {
		key := fmt.Sprint("t", i)
		res, err := s.Append(ctx, e.subj(events.AggTurn, key), 0, e.failure(key)...)
		testutil.NoError(t, err)
		want = append(want, res.Events...)
	}
	// From the beginning (0 and 1 alike): every commit of the stream in
	// order, ours last.
	var whole []events.Event
	for _, from := range []uint64{0, 1} {
		got := collect(t, s, from)
		if len(got) < 10 || got[0].Seq != 1 || got[len(got)-1].Seq != e.seq(5) {
			t.Fatalf("Read(%d): %d events, seqs %d..%d, want 1..%d", from, len(got), got[0].Seq, got[len(got)-1].Seq, e.seq(5))
		}
		for i := 1; i < len(got); i++ {
			if p, q := got[i-1], got[i]; q.Seq != p.Seq && q.Seq != p.Seq+1 || q.Seq == p.Seq && q.Index != p.Index+1 || q.Seq != p.Seq && q.Index != 0 {
				t.Fatalf("Read(%d): seq %d index %d after seq %d index %d", from, q.Seq, q.Index, p.Seq, p.Index)
			}
		}
		ours := got[len(got)-10:]
		for i := range ours {
			sameEvent(t, ours[i], want[i], e.seq(i/2+1), i%2, 0)
		}
		if whole != nil && len(whole) != len(got) {
			t.Fatalf("Read(0) gave %d events, Read(1) %d", len(whole), len(got))
		}
		whole = got
	}
	// From N.
	got := collect(t, s, e.seq(4))
	if len(got) != 4 || got[0].Seq != e.seq(4) || got[0].ID != want[6].ID || got[3].ID != want[9].ID {
		t.Fatalf("Read(%d): %d events from seq %d", e.seq(4), len(got), got[0].Seq)
	}
	if got := collect(t, s, e.seq(6)); len(got) != 0 {
		t.Fatalf("read past the end: %d events", len(got))
	}
	// The caller may stop early.
	n := 0
	for _, err := range s.Read(ctx, e.seq(1)) {
		testutil.NoError(t, err)
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("stopped read went on to %d", n)
	}
}

func confWatch(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s := e.s
	before := appendN(t, e, e.profile(), profileID, 3)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := iterate(s.Watch(wctx, e.seq(2)))
	// The existing commits from seq(2) first, then the new ones as appended.
	sameEvent(t, w.next(t, "the 2nd commit"), before[1], e.seq(2), 0, 0)
	sameEvent(t, w.next(t, "the 3rd commit"), before[2], e.seq(3), 0, 0)
	for i := range 3 {
		res, err := s.Append(ctx, e.subj(events.AggTurn, "w"), events.AnySeq, e.failure(fmt.Sprint("w", i))...)
		testutil.NoError(t, err)
		sameEvent(t, w.next(t, "a new event"), res.Events[0], e.seq(4+i), 0, 0)
		sameEvent(t, w.next(t, "a new event"), res.Events[1], e.seq(4+i), 1, 0)
	}
	// Cancelling the context ends the iteration, without an error.
	cancel()
	w.wantEnd(t, nil)
}

// confForeign publishes messages fledger did not write on its subjects:
// Read yields each as a *DecodeError naming its sequence and goes on;
// ReadSubject skips them but counts their sequence, so a guarded append
// expects it.
func confForeign(t *testing.T, e env) {
	ctx := testutil.Context(t)
	s, p := e.s, e.profile()
	js := rawJS(t, s)
	_, err := js.Publish(ctx, p, []byte("not json"))
	testutil.NoError(t, err)
	good := e.failure("turn-1")
	_, err = s.Append(ctx, p, e.seq(1), good...)
	testutil.NoError(t, err)
	_, err = js.Publish(ctx, p, []byte(`{"events":[{"id":"x","type":"Martian","schema_version":1,"payload":{}}]}`))
	testutil.NoError(t, err)

	evs, last, err := s.ReadSubject(ctx, p)
	testutil.NoError(t, err)
	if len(evs) != 2 || last != e.seq(3) {
		t.Fatalf("ReadSubject: %d events up to %d, want 2 up to %d", len(evs), last, e.seq(3))
	}
	sameEvent(t, evs[0], good[0], e.seq(2), 0, 0)
	// The foreign message is the subject's last: appends expect it.
	_, err = s.Append(ctx, p, e.seq(2), e.cleared(profileID, "stale"))
	wantConflict(t, err, p, p, e.seq(2), e.seq(3))
	res, err := s.Append(ctx, p, e.seq(3), e.cleared(profileID, "after"))
	testutil.NoError(t, err)
	wantResult(t, res, e.seq(4), false, false)

	var bad, ok []uint64
	for ev, err := range s.Read(ctx, e.seq(1)) {
		if err != nil {
			var de *events.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, events.ErrDecode) {
				t.Fatalf("read error %v, want a *DecodeError", err)
			}
			if de.Seq != ev.Seq || de.Subject != p || de.Gap() || de.Size == 0 {
				t.Fatalf("decode error %+v (event seq %d)", *de, ev.Seq)
			}
			if de.Seq == e.seq(3) && !errors.Is(err, events.ErrUnknownType) {
				t.Fatalf("seq %d: %v, want an unknown type", de.Seq, err)
			}
			bad = append(bad, de.Seq)
			continue
		}
		ok = append(ok, ev.Seq)
	}
	if !slices.Equal(bad, []uint64{e.seq(1), e.seq(3)}) || !slices.Equal(ok, []uint64{e.seq(2), e.seq(2), e.seq(4)}) {
		t.Fatalf("Read: decode errors at %v, events at %v; want %v and %v", bad, ok,
			[]uint64{e.seq(1), e.seq(3)}, []uint64{e.seq(2), e.seq(2), e.seq(4)})
	}
	e.wantStream(t, 4)
}
