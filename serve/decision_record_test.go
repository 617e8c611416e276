package serve_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/natstest"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections/export"
	"github.com/fledger/fledger/serve"
	"github.com/fledger/fledger/serve/client"
)

// A decision is the same bytes over HTTP, over the micro service and in
// the JSONL export: one record type (projections.DecisionRecord), bodies
// not HTML-escaped, so an HTML error page's "<" stays "<".
func TestDecisions_SameRecordOverHTTPMicroAndExport(t *testing.T) {
	srv, st := defaultServer(t, testutil.NewManualClock(testutil.T0))
	ctx := testutil.Context(t)
	step, err := srv.cl.Begin(ctx, client.BeginRequest{Agent: "main", Session: "s1"})
	testutil.NoError(t, err)
	page := "<html><body>404 model not found</body></html>"
	step, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: 1, Error: &client.ProviderError{Status: 404, Code: "not_found_error", Message: page}})
	testutil.NoError(t, err)
	if step.Next.Action != "call" || step.Next.Provider == "anthropic" {
		t.Fatalf("next %+v, want a call to the fallback", step.Next)
	}
	_, err = srv.cl.Report(ctx, step.TurnID, client.Outcome{Attempt: step.Next.Attempt, OK: true})
	testutil.NoError(t, err)

	status, body := do(t, "GET", srv.url+"/v1/decisions?agent=main", "")
	if status != http.StatusOK {
		t.Fatalf("GET /v1/decisions: %d %s", status, body)
	}
	var view struct {
		Decisions []json.RawMessage `json:"decisions"`
	}
	testutil.NoError(t, json.Unmarshal(body, &view))

	var buf bytes.Buffer
	sink := export.NewJSONL(&buf)
	_, err = export.Range(ctx, st, 0, sink, 0)
	testutil.NoError(t, err)
	testutil.NoError(t, sink.Close())
	want := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(want) < 2 || !strings.Contains(buf.String(), `"errorPreview":"<html>`) {
		t.Fatalf("export has %d records, want a failure with an unescaped HTML preview:\n%s", len(want), buf.String())
	}
	if len(view.Decisions) != len(want) {
		t.Fatalf("HTTP has %d decisions, the export %d", len(view.Decisions), len(want))
	}
	for i := range want {
		if string(view.Decisions[i]) != want[i] {
			t.Fatalf("decision %d\nHTTP:   %s\nexport: %s", i, view.Decisions[i], want[i])
		}
	}

	ms, err := srv.svc.StartMicro(st)
	testutil.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop() })
	nc := natstest.DialWriter(t, st)
	m, err := nc.RequestWithContext(ctx, serve.MicroPrefix+".decisions.list", []byte(`{"agent":"main"}`))
	testutil.NoError(t, err)
	var mv struct {
		Decisions []json.RawMessage `json:"decisions"`
	}
	testutil.NoError(t, json.Unmarshal(m.Data, &mv))
	if len(mv.Decisions) != len(want) {
		t.Fatalf("micro has %d decisions, the export %d: %s", len(mv.Decisions), len(want), m.Data)
	}
	for i := range want {
		if string(mv.Decisions[i]) != want[i] {
			t.Fatalf("decision %d\nmicro:  %s\nexport: %s", i, mv.Decisions[i], want[i])
		}
	}
}
