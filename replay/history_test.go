package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/replay"
)

// loadLedger publishes a ledger recorded by an earlier build (the raw
// stored messages, fixtures/ledgers/NAME.jsonl) into a fresh stream, byte
// for byte, in order.
func loadLedger(t *testing.T, name string) events.Store {
	t.Helper()
	return loadEditedLedger(t, name, nil)
}

// loadEditedLedger is loadLedger with each message's body passed through
// edit (when not nil) before it is published: a ledger tampered with.
func loadEditedLedger(t *testing.T, name string, edit func(seq uint64, data []byte) []byte) events.Store {
	t.Helper()
	st := openStore(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	f, err := os.Open(filepath.Join("..", "fixtures", "ledgers", name+".jsonl"))
	testutil.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for n := uint64(1); sc.Scan(); n++ {
		var m struct {
			Seq     uint64          `json:"seq"`
			Subject string          `json:"subject"`
			MsgID   string          `json:"msg_id"`
			Data    json.RawMessage `json:"data"`
		}
		testutil.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if edit != nil {
			m.Data = edit(m.Seq, m.Data)
		}
		msg := &nats.Msg{Subject: m.Subject, Data: m.Data, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, m.MsgID)
		ack, err := js.PublishMsg(context.Background(), msg)
		testutil.NoError(t, err)
		if ack.Sequence != m.Seq || ack.Sequence != n {
			t.Fatalf("message %d stored at seq %d, recorded at %d", n, ack.Sequence, m.Seq)
		}
	}
	testutil.NoError(t, sc.Err())
	return st
}

// History is forever: a ledger written by the first release (before
// recorded bases, step message ids and ProfileUsed; six fixture scenarios
// on one stream) still reads, re-decides and verifies with this build.
func TestHistory_FirstReleaseLedgerVerifies(t *testing.T) {
	st := loadLedger(t, "first-release")
	rep, err := replay.Verify(context.Background(), st, replay.VerifyOptions{})
	testutil.NoError(t, err)
	if !rep.OK() {
		t.Fatalf("%d divergent commits; first: %+v", rep.Diverged, rep.Divergences[0])
	}
	want := map[string]int{"start": 16, "outcome": 44, "resume": 14, "session": 4, "auth_order": 2, "config": 6}
	for k, n := range want {
		if rep.Checked[k] != n {
			t.Errorf("checked %d %s decisions, want %d (all: %v)", rep.Checked[k], k, n, rep.Checked)
		}
	}
	if rep.Commits != 86 || rep.Events != 207 || rep.Turns != 16 {
		t.Fatalf("read %d commits, %d events, %d turns; want 86, 207, 16", rep.Commits, rep.Events, rep.Turns)
	}
}
