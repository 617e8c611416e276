package events_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// jsMsg is the message at seq as the nats CLI sees it (a stream
// message get on the store's stream).
func jsMsg(t *testing.T, s events.Store, seq uint64) *jetstream.RawStreamMsg {
	t.Helper()
	js, err := jetstream.New(events.ConnOf(s))
	testutil.NoError(t, err)
	str, err := js.Stream(testutil.Context(t), events.StreamName)
	testutil.NoError(t, err)
	m, err := str.GetMsg(testutil.Context(t), seq)
	testutil.NoError(t, err)
	return m
}

func wantHeaders(t *testing.T, m *jetstream.RawStreamMsg, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := m.Header[k]
		if v == "" {
			if ok {
				t.Errorf("seq %d: header %s = %q, want none", m.Sequence, k, got)
			}
			continue
		}
		if len(got) != 1 || got[0] != v {
			t.Errorf("seq %d: header %s = %q, want %q", m.Sequence, k, got, v)
		}
	}
}

func turnStarted(turn, session string) events.Event {
	return events.New("main", turn, t0, events.TurnStarted{TurnID: turn, Session: session, Chat: "direct",
		Requested: events.ModelRef{Provider: "openai", Model: "gpt-5"}, SelectionSource: "default",
		Chain:      []events.Candidate{{Provider: "openai", Model: "gpt-5", RouteOrigin: "requested"}},
		ConfigHash: "sha256:c", AttemptLimit: 32, Seed: 7, StartedAt: 1000}, events.WithCorrelation(turn))
}

// Every stored commit names what it holds in its headers: its agent,
// event types, turn and session, and the commit schema, whether it is
// stored under its turn's subject or its profile's.
func TestAppend_HeadersNameWhatTheCommitHolds(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	turnSubj := events.MustSubject("main", events.AggTurn, "turn-1")
	res, err := s.Append(ctx, turnSubj, 0, turnStarted("turn-1", "agent:main:telegram:42"))
	testutil.NoError(t, err)
	wantHeaders(t, jsMsg(t, s, res.Seq), map[string]string{
		events.HeaderSchema: events.CommitSchema, events.HeaderAgent: "main", events.HeaderEvents: "TurnStarted",
		events.HeaderTurn: "turn-1", events.HeaderSession: "agent:main:telegram:42",
	})

	res, err = s.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)
	wantHeaders(t, jsMsg(t, s, res.Seq), map[string]string{
		events.HeaderSchema: "1", events.HeaderAgent: "main", events.HeaderEvents: "AttemptFailed,ProfileFailureRecorded",
		events.HeaderTurn: "turn-1", events.HeaderSession: "",
	})

	// An id with white space, a comma or a line break is written as its
	// subject token: a valid header value, the same form as in subjects.
	odd := "s 1,\r\nx"
	sessSubj := events.MustSubject("main", events.AggSession, odd)
	res, err = s.Append(ctx, sessSubj, 0, events.New("main", odd, t0, events.SessionReset{Session: odd, Kind: "new"}))
	testutil.NoError(t, err)
	wantHeaders(t, jsMsg(t, s, res.Seq), map[string]string{
		events.HeaderEvents: "SessionReset", events.HeaderTurn: "", events.HeaderSession: events.EncodeToken(odd),
	})
	if events.EncodeToken(odd) != "s%201%2C%0D%0Ax" {
		t.Fatalf("encoded %q", events.EncodeToken(odd))
	}

	// Many events: the list is bounded and says how many it left out.
	var many []events.Event
	for i := range 40 {
		id := fmt.Sprintf("t%02d", i)
		many = append(many, events.New("main", id, t0, events.TurnSucceeded{TurnID: id, Attempts: 1}))
	}
	res, err = s.Append(ctx, events.MustSubject("main", events.AggTurn, "t00"), 0, many...)
	testutil.NoError(t, err)
	m := jsMsg(t, s, res.Seq)
	if ev := m.Header.Get(events.HeaderEvents); !strings.HasSuffix(ev, ",+16 more") || strings.Count(ev, "TurnSucceeded") != 24 {
		t.Fatalf("events header %q", ev)
	}
	if tu := m.Header.Get(events.HeaderTurn); !strings.HasPrefix(tu, "t00,t01,") || !strings.HasSuffix(tu, ",+16 more") {
		t.Fatalf("turn header %q", tu)
	}
}

// Concurrent appends grouped by the committer (atomic batches or
// pipelined sends) keep every commit's headers.
func TestGroupCommit_EveryMessageKeepsItsHeaders(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	chainAppends(t, s, 32, 4)
	st := events.GroupCommitStats(s)
	if st.Batches == 0 {
		t.Logf("no atomic batch this run: %+v", st)
	}
	for seq := uint64(1); seq <= 32*4; seq++ {
		m := jsMsg(t, s, seq)
		id := strings.TrimPrefix(m.Subject, "fledger.main.turn.")
		wantHeaders(t, m, map[string]string{
			events.HeaderSchema: "1", events.HeaderAgent: "main", events.HeaderEvents: "TurnSucceeded", events.HeaderTurn: id,
		})
	}
}

// The headers are metadata: a commit stored without them (as every
// commit was before they were written) reads exactly as the same commit
// stored with them.
func TestRead_CommitWithoutHeadersReadsTheSame(t *testing.T) {
	s, _ := testutil.OpenStore(t)
	ctx := testutil.Context(t)
	evs := failure("turn-1", 1)
	_, err := s.Append(ctx, profileSubj, 0, evs...)
	testutil.NoError(t, err)
	with := jsMsg(t, s, 1)
	if with.Header.Get(events.HeaderTurn) == "" {
		t.Fatal("no metadata headers")
	}
	// The same body, stored bare the way an earlier fledger stored it.
	js, err := jetstream.New(events.ConnOf(s))
	testutil.NoError(t, err)
	_, err = js.PublishMsg(context.Background(), &nats.Msg{Subject: profileSubj, Data: with.Data,
		Header: nats.Header{jetstream.MsgIDHeader: []string{"bare"}}})
	testutil.NoError(t, err)
	if m := jsMsg(t, s, 2); m.Header.Get(events.HeaderEvents) != "" {
		t.Fatalf("bare message has headers %v", m.Header)
	}
	got, last, err := s.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if last != 2 || len(got) != 4 {
		t.Fatalf("read %d events to %d", len(got), last)
	}
	for i := range 2 {
		a, b := got[i], got[i+2]
		if b.Seq != 2 || !reflect.DeepEqual(a.Envelope, b.Envelope) || !reflect.DeepEqual(a.Data, b.Data) || a.Index != b.Index || a.Basis != b.Basis {
			t.Fatalf("event %d with headers %+v, without %+v", i, a, b)
		}
	}
}
