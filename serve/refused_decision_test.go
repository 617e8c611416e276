package serve_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/fledger/fledger/engine"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A step whose events the store refuses is a 500 saying nothing was
// recorded; the turn is unchanged and the same report succeeds later.
func TestHTTP_RefusedDecisionLeavesTurnUnchanged(t *testing.T) {
	st := &testutil.RefusingStore{Store: testutil.Store(t)}
	srv := startServer(t, st, serve.Config{Config: loadConfig(t), EngineOptions: []engine.Option{engine.WithClock(testutil.NewManualClock(testutil.T0))},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_, err := srv.cl.Begin(testutil.Context(t), client.BeginRequest{Session: "s1", TurnID: "t1"})
	testutil.NoError(t, err)
	before := testutil.LastSeq(t, st)
	st.Refuse.Store(true)
	status, b := do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`)
	eb := errorBody(t, b)
	if status != 500 || eb.Error != serve.CodeInternal || !strings.Contains(eb.Detail, "nothing was recorded") || strings.Contains(eb.Detail, "envelope") {
		t.Fatalf("%d %s", status, b)
	}
	if testutil.LastSeq(t, st) != before {
		t.Fatal("appended")
	}
	st.Refuse.Store(false)
	status, b = do(t, "POST", srv.url+"/v1/turns/t1/outcomes", `{"attempt":1,"ok":true}`)
	if status != 200 || !strings.Contains(string(b), `"action":"done"`) {
		t.Fatalf("after: %d %s", status, b)
	}
}
