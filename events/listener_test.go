package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
)

// listenerPassword reads a user's password from a credentials file the
// embedded server wrote in dir.
func listenerPassword(t testing.TB, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	testutil.NoError(t, err)
	var c struct{ User, Password, URL string }
	testutil.NoError(t, json.Unmarshal(b, &c))
	if c.Password == "" {
		t.Fatalf("%s holds no password", file)
	}
	return c.Password
}

// The listener refuses anonymous clients; the read-only user reads,
// subscribes and watches but cannot publish into fledger.> (raw or through
// JetStream), touch the stream or call a write endpoint; fledger itself
// still appends; a second writer process gets in with the writer's
// credentials from the data directory.
func TestListener_AnonymousRefusedReaderReadOnly(t *testing.T) {
	st, dir := testutil.OpenStore(t, events.WithListen(0), events.WithReaderRequests("fledgerapi.v1.health"))
	url := st.ClientURL()
	ctx := testutil.Context(t)
	_, err := st.Append(ctx, profileSubj, 0, failure("turn-1", 1)...)
	testutil.NoError(t, err)

	// Anonymous: refused at connect, by the store and by a raw client.
	nc, err := nats.Connect(url, nats.NoReconnect())
	if !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("anonymous connect: %v, want %v", err, nats.ErrAuthorization)
	}
	_, err = events.Open(ctx, events.WithURL(url))
	testutil.ErrorIs(t, err, nats.ErrAuthorization)
	// The data directory's credentials are not sent to another port.
	_, err = events.Open(ctx, events.WithURL("nats://127.0.0.1:1"), events.WithListenerCredentials(dir, events.ReadWrite), events.WithTimeout(time.Second))
	if err == nil {
		t.Fatal("connected to a port nothing listens on")
	}

	// The reader through the store: reads and watches, cannot append.
	rd, err := events.Open(ctx, events.WithURL(url), events.WithListenerCredentials(dir, events.ReadOnly), events.WithTimeout(time.Second))
	testutil.NoError(t, err)
	defer rd.Close()
	got, last, err := rd.ReadSubject(ctx, profileSubj)
	testutil.NoError(t, err)
	if len(got) != 2 || last != 1 {
		t.Fatalf("the reader read %d events up to %d", len(got), last)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watched := make(chan uint64, 4)
	go func() {
		for ev, err := range rd.Watch(wctx, 1) {
			if err != nil {
				return
			}
			watched <- ev.Seq
		}
	}()
	// Refused at once, naming why (the server would only drop it).
	_, err = rd.Append(ctx, profileSubj, 1, failure("turn-2", 2)...)
	testutil.ErrorIs(t, err, events.ErrReadOnly)

	// The reader raw: subscribes to fledger.>, but its publishes into it
	// and to the stream's API are refused, and nothing is stored.
	perm := make(chan error, 8)
	rnc, err := nats.Connect(url, nats.UserInfo(events.ReaderUser, listenerPassword(t, dir, events.ReaderCredentialsFile)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { perm <- err }))
	testutil.NoError(t, err)
	defer rnc.Close()
	sub, err := rnc.SubscribeSync(events.SubjectPrefix + ".>")
	testutil.NoError(t, err)
	testutil.NoError(t, rnc.Flush())
	for _, subj := range []string{"fledger.main.turn.oops", "$JS.API.STREAM.DELETE." + events.StreamName,
		"$JS.API.STREAM.PURGE." + events.StreamName, "$JS.API.STREAM.UPDATE." + events.StreamName, "fledgerapi.v1.turns.begin"} {
		testutil.NoError(t, rnc.Publish(subj, []byte(`{"x":1}`)))
		testutil.NoError(t, rnc.Flush())
		select {
		case err := <-perm:
			if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subj) {
				t.Fatalf("publish to %s: %v, want a permissions violation", subj, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("publish to %s: no permissions violation", subj)
		}
	}
	js, err := jetstream.New(rnc)
	testutil.NoError(t, err)
	jctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err = js.Publish(jctx, "fledger.main.turn.oops", []byte("hello"))
	cancel()
	if err == nil {
		t.Fatal("the read-only user published through JetStream")
	}
	<-perm
	// A read-only request subject given with WithReaderRequests is allowed.
	testutil.NoError(t, rnc.Publish("fledgerapi.v1.health", nil))
	testutil.NoError(t, rnc.Flush())
	select {
	case err := <-perm:
		t.Fatalf("read-only request refused: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if n, err := st.LastSeq(ctx, ""); err != nil || n != 1 {
		t.Fatalf("last seq %d, %v: the reader's publishes were stored", n, err)
	}

	// fledger itself appends; a second writer process too; the reader
	// sees both, raw and through Watch.
	_, err = st.Append(ctx, profileSubj, 1, failure("turn-2", 2)...)
	testutil.NoError(t, err)
	wr, err := events.Open(ctx, events.WithURL(strings.Replace(url, "127.0.0.1", "localhost", 1)), events.WithListenerCredentials(dir, events.ReadWrite))
	testutil.NoError(t, err)
	defer wr.Close()
	_, err = wr.Append(ctx, profileSubj, 2, failure("turn-3", 3)...)
	testutil.NoError(t, err)
	for want := uint64(2); want <= 3; want++ {
		m, err := sub.NextMsg(5 * time.Second)
		testutil.NoError(t, err)
		if !strings.HasPrefix(m.Subject, events.SubjectPrefix+".") {
			t.Fatalf("raw subscription got %s", m.Subject)
		}
	}
	seen := map[uint64]bool{}
	for !seen[3] {
		select {
		case seq := <-watched:
			seen[seq] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("the reader's watch saw %v, want up to 3", seen)
		}
	}
}

// A credentials file that is there but damaged is an error naming it,
// not a silent connect without credentials (which the listener refuses
// with advice to use the very directory given).
func TestListener_DamagedCredentialsFileNamed(t *testing.T) {
	st, dir := testutil.OpenStore(t, events.WithListen(0))
	path := filepath.Join(dir, events.ReaderCredentialsFile)
	testutil.NoError(t, os.WriteFile(path, []byte(`{"url":`), 0o600))
	_, err := events.Open(testutil.Context(t), events.WithURL(st.ClientURL()), events.WithListenerCredentials(dir, events.ReadOnly), events.WithTimeout(time.Second))
	if err == nil || !strings.Contains(err.Error(), path) || errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("error %v, want one naming %s", err, path)
	}
}

// The reader moves a durable cursor it keeps no longer (deleted and made
// again at Since), as `export --follow --out FILE` does for a file that
// ends elsewhere: the listener lets it delete consumers, and the move
// neither hangs nor is refused.
func TestListener_ReaderMovesACursor(t *testing.T) {
	st, dir := testutil.OpenStore(t, events.WithListen(0))
	ctx := testutil.Context(t)
	for i := range 3 {
		_, err := st.Append(ctx, profileSubj, events.AnySeq, failure(fmt.Sprintf("turn-%d", i), 1)...)
		testutil.NoError(t, err)
	}
	rd, err := events.Open(ctx, events.WithURL(st.ClientURL()), events.WithListenerCredentials(dir, events.ReadOnly), events.WithTimeout(time.Second))
	testutil.NoError(t, err)
	defer rd.Close()
	opts := events.CursorOptions{Name: "export-x", Since: 1}
	c, err := rd.Cursor(ctx, opts)
	testutil.NoError(t, err)
	ds, err := c.Fetch(ctx, 3, 5*time.Second)
	testutil.NoError(t, err)
	for _, d := range ds {
		testutil.NoError(t, d.Ack(ctx))
	}
	testutil.NoError(t, c.Close())

	opts.Since = 2
	opts.Keep = func(context.Context, events.CursorState) (bool, error) { return false, nil }
	c, err = rd.Cursor(ctx, opts)
	testutil.NoError(t, err)
	defer c.Close()
	ds, err = c.Fetch(ctx, 1, 5*time.Second)
	testutil.NoError(t, err)
	if len(ds) != 1 || ds[0].Seq != 2 {
		t.Fatalf("after the move the reader fetched %d from %v, want seq 2", len(ds), ds)
	}
}
