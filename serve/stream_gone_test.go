package serve_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
)

// A read after the stream was removed under a running serve (a rotation
// done while it ran, a stream deleted by an operator) is answered 503
// unavailable naming what happened, not 500 internal.
func TestHTTP_StreamGoneIs503(t *testing.T) {
	url := natstest.StartNode(t)
	st, err := events.Open(testutil.Context(t), events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	srv := startServer(t, st, serve.Config{Config: loadConfig(t)})
	if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"t1"}`); status != 200 {
		t.Fatalf("begin: %d %s", status, b)
	}
	nc, err := nats.Connect(url)
	testutil.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testutil.NoError(t, err)
	testutil.NoError(t, js.DeleteStream(testutil.Context(t), events.StreamName))
	status, b := do(t, "GET", srv.url+"/v1/decisions?from_seq=1", "")
	if status != 503 || !strings.Contains(string(b), `"error":"unavailable"`) || !strings.Contains(string(b), "the FLEDGER stream is not on the NATS server any more") {
		t.Fatalf("decisions after the stream was deleted: %d %s", status, b)
	}
}
