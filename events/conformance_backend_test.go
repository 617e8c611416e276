package events_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
)

// The backends the conformance suite runs on, and how it looks beneath
// the Store interface on each (the stored message at a sequence, the
// stream's message count).

// opener opens a store with the suite's options added to the backend's;
// the store is closed when t ends.
type opener func(t *testing.T, opts ...events.Option) events.Store

// backend is one kind of store the suite runs on.
type backend struct {
	open opener
	// modes are the commit modes the per-mode cases run in, each in its
	// own group when there are several; the other cases run in the first.
	modes []mode
	// jetstream: a JetStream stream, on which the cases of jetstreamOnly
	// run.
	jetstream bool
	look      inspector
}

// inspector reads what a backend holds beneath the Store interface.
type inspector interface {
	// msg is the message stored at seq.
	msg(t testing.TB, s events.Store, seq uint64) storedMsg
	// state is how many messages the stream holds and its last sequence.
	state(t testing.TB, s events.Store) (msgs, last uint64)
}

// The commit modes.
var (
	groupCommit   = mode{name: "GroupCommit", groupCommit: true}
	noGroupCommit = mode{name: "NoGroupCommit"}
)

// backends are the stores the suite runs on; each is set up by its
// subtest (the cluster is started there).
var backends = []struct {
	name  string
	setup func(t *testing.T) backend
}{
	// The embedded single node (R1, a fresh data directory per case),
	// without and with group commit.
	{"Embedded", func(*testing.T) backend { return embedded(noGroupCommit) }},
	{"EmbeddedGroupCommit", func(*testing.T) backend { return embedded(groupCommit) }},
	// A 3-node in-process cluster, on one stream created R3 by the first
	// case's store, in both modes.
	{"Cluster3", cluster3},
	// The in-memory store (a fresh one per case); it has no group commit.
	{"Memory", func(*testing.T) backend {
		return backend{open: openMemory, modes: []mode{noGroupCommit}, look: memoryInspector{}}
	}},
}

func embedded(m mode) backend {
	return backend{
		open: func(t *testing.T, opts ...events.Option) events.Store {
			s, _ := testutil.OpenStore(t, opts...)
			return s
		},
		modes: []mode{m}, jetstream: true, look: jsInspector{},
	}
}

func cluster3(t *testing.T) backend {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	c := natstest.StartCluster(t, 3)
	return backend{
		open: func(t *testing.T, opts ...events.Option) events.Store {
			t.Helper()
			s := openCluster(t, c.URLs(), opts...)
			if r := replicasOf(t, s); r != 3 {
				t.Fatalf("stream has %d replicas, want 3", r)
			}
			return s
		},
		modes: []mode{groupCommit, noGroupCommit}, jetstream: true, look: jsInspector{},
	}
}

// openMemory opens an in-memory store, closed when t ends.
func openMemory(t *testing.T, opts ...events.Option) events.Store {
	t.Helper()
	s, err := events.OpenMemory(opts...)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// replicasOf is the stream's replica count, as Status reports it.
func replicasOf(t testing.TB, s events.Store) int {
	t.Helper()
	st := events.Status(testutil.Context(t), s)
	testutil.NoError(t, st.Err)
	return st.Replicas
}

// storedMsg is a message as the store holds it.
type storedMsg struct {
	Subject string
	Header  nats.Header
	Data    []byte
}

// jsInspector reads the FLEDGER stream over the store's NATS connection.
type jsInspector struct{}

// conn is the JetStream store's connection (the Store interface has
// none: events.ConnOf is a test-only export).
func conn(t testing.TB, s events.Store) *nats.Conn {
	t.Helper()
	c := events.ConnOf(s)
	if c == nil {
		t.Fatalf("store %T has no NATS connection", s)
	}
	return c
}

func rawJS(t testing.TB, s events.Store) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(conn(t, s))
	testutil.NoError(t, err)
	return js
}

// msg reads the stored message at seq from the stream leader with the
// STREAM.MSG.GET API (a direct get may be answered by any replica).
func (jsInspector) msg(t testing.TB, s events.Store, seq uint64) storedMsg {
	t.Helper()
	req, _ := json.Marshal(map[string]uint64{"seq": seq})
	resp, err := conn(t, s).Request("$JS.API.STREAM.MSG.GET."+events.StreamName, req, 5*time.Second)
	testutil.NoError(t, err)
	var r struct {
		Message *struct {
			Subject string `json:"subject"`
			Hdrs    []byte `json:"hdrs"`
			Data    []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	testutil.NoError(t, json.Unmarshal(resp.Data, &r))
	if r.Error != nil || r.Message == nil {
		t.Fatalf("get message %d: %+v", seq, r.Error)
	}
	m := storedMsg{Subject: r.Message.Subject, Data: r.Message.Data, Header: nats.Header{}}
	if len(r.Message.Hdrs) > 0 {
		m.Header, err = nats.DecodeHeadersMsg(r.Message.Hdrs)
		testutil.NoError(t, err)
	}
	return m
}

// state is the leader's stream state.
func (jsInspector) state(t testing.TB, s events.Store) (msgs, last uint64) {
	t.Helper()
	st, err := rawJS(t, s).Stream(testutil.Context(t), events.StreamName)
	testutil.NoError(t, err)
	info, err := st.Info(testutil.Context(t))
	testutil.NoError(t, err)
	return info.State.Msgs, info.State.LastSeq
}

// memoryInspector reads an in-memory store's messages.
type memoryInspector struct{}

func (memoryInspector) msg(t testing.TB, s events.Store, seq uint64) storedMsg {
	t.Helper()
	subject, id, data, ok := events.MemoryMessage(s, seq)
	if !ok {
		t.Fatalf("no message %d in the store", seq)
	}
	h := nats.Header{}
	h.Set(jetstream.MsgIDHeader, id)
	return storedMsg{Subject: subject, Header: h, Data: data}
}

// state counts every sequence as a message: the in-memory stream has no
// gaps.
func (memoryInspector) state(t testing.TB, s events.Store) (msgs, last uint64) {
	t.Helper()
	last, err := s.LastSeq(testutil.Context(t), "")
	testutil.NoError(t, err)
	for msgs < last {
		if _, _, _, ok := events.MemoryMessage(s, msgs+1); !ok {
			break
		}
		msgs++
	}
	return msgs, last
}
