package natstest

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The listener passwords a test gives an embedded store
// (events.WithListen(0), events.WithListenPasswords(WriterPassword,
// ReaderPassword)) so that [DialWriter] can reach it as a foreign client.
const (
	WriterPassword = "natstest-writer-secret"
	ReaderPassword = "natstest-reader-secret"
)

// Listener is what a store listening on loopback offers a foreign client:
// its URL (events.Store's ClientURL).
type Listener interface{ ClientURL() string }

// writerUser is fledger's own listener user (events.WriterUser), the only
// one that may publish into fledger.>.
const writerUser = "fledger"

// DialWriter connects a plain NATS client to st's listener as fledger's
// writer user with [WriterPassword], and closes it when the test ends: an
// outside client (the nats CLI, another program), never the store's own
// connection, for the tests that do what only an outside client does —
// publish a stray message into fledger.>, read the stored bytes, call the
// micro service.
func DialWriter(t testing.TB, st Listener) *nats.Conn {
	t.Helper()
	url := st.ClientURL()
	if url == "" {
		t.Fatal("natstest: the store has no listener (open it with events.WithListen)")
	}
	nc, err := nats.Connect(url, nats.UserInfo(writerUser, WriterPassword), nats.Name("natstest foreign client"))
	if err != nil {
		t.Fatalf("natstest: connect to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream is a JetStream client of a plain NATS connection to url (a
// server a test started, without users), closed when the test ends.
func JetStream(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.Name("natstest client"))
	if err != nil {
		t.Fatalf("natstest: connect to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: jetstream on %s: %v", url, err)
	}
	return js
}
