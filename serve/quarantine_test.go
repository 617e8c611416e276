package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A stray message on a fledger subject (not a fledger commit) is
// quarantined: /v1/decisions still answers 200 with every decision,
// /healthz says degraded (200) naming the count and the sequence, and
// fledger_serve_quarantined_messages_total counts it.
func TestHTTP_StrayMessageIsQuarantinedNotFatal(t *testing.T) {
	clock := testutil.NewManualClock(testutil.T0)
	srv, st := defaultServer(t, clock)
	ctx := testutil.Context(t)
	// turn fails its first call (auth) and answers the next one.
	turn := func(session string) {
		step, err := srv.cl.Begin(ctx, client.BeginRequest{Session: session})
		testutil.NoError(t, err)
		for i := 0; step.Next.Action == "call"; i++ {
			o := client.Outcome{Attempt: step.Next.Attempt, OK: true, LatencyMs: 5}
			if i == 0 {
				o = client.Outcome{Attempt: step.Next.Attempt, Error: authFailed()}
			}
			id := step.TurnID
			step, err = srv.cl.Report(ctx, id, o)
			testutil.NoError(t, err)
			step.TurnID = id
		}
		if step.Next.Action != "done" && step.Next.Action != "exhausted" {
			t.Fatalf("turn %s ended with %+v", session, step.Next)
		}
	}
	type decisions struct {
		Decisions []struct {
			Seq uint64 `json:"seq"`
		} `json:"decisions"`
		Checkpoint uint64 `json:"checkpoint"`
	}
	turn("s1")
	turn("s2")
	var base decisions
	testutil.NoError(t, srv.cl.Decisions(ctx, client.DecisionsQuery{}, &base))
	if len(base.Decisions) == 0 {
		t.Fatal("no decisions to compare")
	}
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	ack, err := js.Publish(ctx, "fledger.main.turn.oops", []byte("hello"))
	testutil.NoError(t, err)
	turn("s3")

	var dec decisions
	testutil.NoError(t, srv.cl.Decisions(ctx, client.DecisionsQuery{}, &dec)) // 200, not 500
	if len(dec.Decisions) < len(base.Decisions) || dec.Checkpoint <= ack.Sequence {
		t.Fatalf("decisions after a stray message at %d: %+v, before it %+v", ack.Sequence, dec, base)
	}
	for i, d := range base.Decisions {
		if dec.Decisions[i].Seq != d.Seq {
			t.Fatalf("decision %d: seq %d, before the stray message %d", i, dec.Decisions[i].Seq, d.Seq)
		}
	}

	resp, err := http.Get(srv.url + "/healthz")
	testutil.NoError(t, err)
	var h serve.Health
	testutil.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || h.Status != "degraded" || h.Quarantined != 1 ||
		len(h.QuarantinedSeqs) != 1 || h.QuarantinedSeqs[0] != ack.Sequence ||
		!strings.Contains(h.Detail, "fledger.main.turn.oops") {
		t.Fatalf("healthz %d %+v", resp.StatusCode, h)
	}

	resp, err = http.Get(srv.url + "/metrics")
	testutil.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\nfledger_serve_quarantined_messages_total 1\n") {
		t.Fatalf("metrics lack the quarantine counter:\n%.2000s", body)
	}
}

// serve --ack-quarantined-through: quarantined messages at or before the
// acknowledged sequence are still listed in /healthz, but the status is
// ok; one stored after it makes it degraded again.
func TestHealth_AcknowledgedQuarantineKeepsStatusOK(t *testing.T) {
	ctx := testutil.Context(t)
	st := testutil.Store(t, events.WithListen(0), events.WithListenPasswords(natstest.WriterPassword, natstest.ReaderPassword))
	js, err := jetstream.New(natstest.DialWriter(t, st))
	testutil.NoError(t, err)
	ack, err := js.Publish(ctx, "fledger.main.turn.oops", []byte("hello"))
	testutil.NoError(t, err)
	srv := startServer(t, st, serve.Config{Config: loadConfig(t), QuarantineAckThrough: ack.Sequence})
	health := func() serve.Health {
		t.Helper()
		var h serve.Health
		for range 100 { // until the background catch-up read the stray message
			resp, err := http.Get(srv.url + "/healthz")
			testutil.NoError(t, err)
			h = serve.Health{}
			testutil.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
			resp.Body.Close()
			if h.Lag == 0 && h.Quarantined > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		return h
	}
	h := health()
	if h.Status != "ok" || h.Quarantined != 1 || len(h.QuarantinedSeqs) != 1 || h.QuarantinedSeqs[0] != ack.Sequence ||
		h.QuarantineAckThrough != ack.Sequence || !strings.HasSuffix(h.Detail, fmt.Sprintf("; acknowledged through seq %d", ack.Sequence)) {
		t.Fatalf("acknowledged stray message: %+v", h)
	}
	later, err := js.Publish(ctx, "fledger.main.turn.oops2", []byte("again"))
	testutil.NoError(t, err)
	for range 100 {
		if h = health(); h.Quarantined == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h.Status != "degraded" || h.Quarantined != 2 || len(h.QuarantinedSeqs) != 2 || h.QuarantinedSeqs[1] != later.Sequence {
		t.Fatalf("a stray message after the acknowledged one: %+v", h)
	}
}
