package export

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fledger/fledger/events"
	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// A collector that answers 400 is not asked again (the OTLP specification:
// 4xx other than 429 are not retryable): one request, then the error.
func TestOTLP_PermanentAnswerIsNotRetried(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	cfg := fastRetry(srv.URL, 5)
	cfg.Attempts, cfg.AttemptInitial, cfg.AttemptMax = 5, 10*time.Millisecond, 20*time.Millisecond
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	err = sink.Export(ctx, []Record{{DecisionRecord: projections.DecisionRecord{Seq: 1, Agent: "main", FallbackStepped: events.FallbackStepped{Decision: "candidate_failed"}}}})
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("export: %v, want the 400", err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
}

// An endpoint variable that is not an http(s) URL is refused at once,
// naming the variable, as --endpoint is (the SDK would send to its default
// port instead).
func TestOTLP_BadEnvironmentEndpointRefused(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "grpc"} {
		clearOTELEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:14317")
		_, err := NewOTLP(testutil.Context(t), OTLPConfig{})
		if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_ENDPOINT") {
			t.Errorf("%s: %v, want a refusal naming OTEL_EXPORTER_OTLP_ENDPOINT", proto, err)
		}
	}
}

// Attributes keep the record's JSON field order (a map value sorts them).
func TestAttributes_InRecordOrder(t *testing.T) {
	r := &Record{DecisionRecord: projections.DecisionRecord{Seq: 1, Agent: "main", FallbackStepped: events.FallbackStepped{Decision: "candidate_failed", SessionID: "s", Status: 429}}}
	kvs, err := Attributes(r)
	testutil.NoError(t, err)
	var got []string
	for _, kv := range kvs {
		got = append(got, string(kv.Key))
	}
	b, err := json.Marshal(r)
	testutil.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(b))
	var want []string
	_, _ = dec.Token() // '{'
	for dec.More() {
		k, _ := dec.Token()
		want = append(want, k.(string))
		var skip json.RawMessage
		testutil.NoError(t, dec.Decode(&skip))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("attributes %v, want the JSON order %v", got, want)
	}
}
