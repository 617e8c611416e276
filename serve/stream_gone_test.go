package serve_test

import (
	"strings"
	"testing"

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
	srv, js, _ := serveOnOwnServer(t)
	testutil.NoError(t, js.DeleteStream(testutil.Context(t), events.StreamName))
	status, b := do(t, "GET", srv.url+"/v1/decisions?from_seq=1", "")
	if status != 503 || !strings.Contains(string(b), `"error":"unavailable"`) || !strings.Contains(string(b), "the FLEDGER stream is not on the NATS server any more") {
		t.Fatalf("decisions after the stream was deleted: %d %s", status, b)
	}
}

// A serve whose stream was removed, and then created again (a rotation
// done while it ran: docs/operations.md "Start a fresh stream"), refuses
// every turn until it is restarted: /healthz and /readyz say so (503), so
// a load balancer takes it out, while the stream is missing and once the
// new one exists. A restarted serve is ready on the new stream.
func TestHealth_StreamReplacedUnderServe(t *testing.T) {
	srv, js, url := serveOnOwnServer(t)
	if status, b := do(t, "GET", srv.url+"/readyz", ""); status != 200 {
		t.Fatalf("readyz before: %d %s", status, b)
	}
	testutil.NoError(t, js.DeleteStream(testutil.Context(t), events.StreamName))
	check := func(when, want string) {
		t.Helper()
		for _, path := range []string{"/healthz", "/readyz"} {
			status, b := do(t, "GET", srv.url+path, "")
			if status != 503 || !strings.Contains(string(b), want) {
				t.Errorf("%s %s: %d %s, want 503 naming %q", when, path, status, b, want)
			}
		}
	}
	check("stream deleted", "stream is not on the server any more")
	if status, b := do(t, "GET", srv.url+"/metrics", ""); status != 200 || !strings.Contains(string(b), "fledger_serve_requests_total") {
		t.Errorf("/metrics with the stream gone: %d, want 200 with the series that can be read:\n%.300s", status, b)
	}
	again, err := events.Open(testutil.Context(t), events.WithURL(url), events.WithFirstSeq(100))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = again.Close() })
	check("stream created again", "stream was replaced while this process ran")
	if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"t2"}`); status != 503 {
		t.Fatalf("begin on the replaced stream: %d %s, want 503", status, b)
	}
	fresh := startServer(t, again, serve.Config{Config: loadConfig(t)})
	if status, b := do(t, "GET", fresh.url+"/readyz", ""); status != 200 {
		t.Fatalf("a serve started on the new stream: readyz %d %s", status, b)
	}
}

// serveOnOwnServer starts a serve on a store on a NATS server of its own,
// begins one turn, and returns the serve, a JetStream client beside it
// (to remove the stream behind its back) and the server's URL.
func serveOnOwnServer(t *testing.T) (*server, jetstream.JetStream, string) {
	t.Helper()
	url := natstest.StartNode(t)
	st, err := events.Open(testutil.Context(t), events.WithURL(url))
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	srv := startServer(t, st, serve.Config{Config: loadConfig(t)})
	if status, b := do(t, "POST", srv.url+"/v1/turns", `{"session":"s1","turn_id":"t1"}`); status != 200 {
		t.Fatalf("begin: %d %s", status, b)
	}
	return srv, natstest.JetStream(t, url), url
}
