// Package foreign gives tests an outside client of a store's server: a
// plain NATS connection, as the nats CLI or another program has, made to
// the server's listener and never taken from the store (which exposes
// none). Tests use it to do what only an outside client does: publish a
// stray message into fledger.>, read the stored bytes, answer requests.
package foreign

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/events"
)

// The listener passwords [Listen] sets.
const (
	WriterPassword = "foreign-writer-secret"
	ReaderPassword = "foreign-reader-secret"
)

// Listen are the options that make an embedded store reachable by a
// foreign client: a loopback listener on a free port, with the known
// passwords [WriterPassword] and [ReaderPassword].
func Listen() []events.Option {
	return []events.Option{events.WithListen(0), events.WithListenPasswords(WriterPassword, ReaderPassword)}
}

// Dial connects a plain NATS client to the listener of st (opened with
// [Listen]) as [events.WriterUser], and closes it when the test ends.
func Dial(t testing.TB, st events.Store) *nats.Conn {
	t.Helper()
	url := st.ClientURL()
	if url == "" {
		t.Fatal("foreign: the store has no listener (open it with foreign.Listen())")
	}
	nc, err := nats.Connect(url, nats.UserInfo(events.WriterUser, WriterPassword), nats.Name("foreign test client"))
	if err != nil {
		t.Fatalf("foreign: connect to %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	return nc
}
