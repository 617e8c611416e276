package export

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fledger/fledger/internal/testutil"
)

// receiver is an in-test OTLP/HTTP logs endpoint: it decodes each request
// with the official OTLP proto package, answers 503 to the first fail
// requests and 200 afterwards, and keeps the records it accepted.
type receiver struct {
	mu       sync.Mutex
	fail     int
	requests int
	refused  int
	records  []*logspb.LogRecord
	service  string
	resource map[string]string // last accepted request's string resource attributes
	header   http.Header       // last request's headers
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	rc.header = r.Header.Clone()
	if rc.refused < rc.fail {
		rc.refused++
		http.Error(w, "collector busy", http.StatusServiceUnavailable)
		return
	}
	rc.accept(&req)
	out, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// accept keeps req's records and resource; rc.mu is held.
func (rc *receiver) accept(req *collogspb.ExportLogsServiceRequest) {
	for _, rl := range req.GetResourceLogs() {
		rc.resource = map[string]string{}
		for _, a := range rl.GetResource().GetAttributes() {
			rc.resource[a.GetKey()] = a.GetValue().GetStringValue()
			if a.GetKey() == "service.name" {
				rc.service = a.GetValue().GetStringValue()
			}
		}
		for _, sl := range rl.GetScopeLogs() {
			rc.records = append(rc.records, sl.GetLogRecords()...)
		}
	}
}

func (rc *receiver) res() map[string]string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.resource
}

func (rc *receiver) got() []*logspb.LogRecord {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*logspb.LogRecord(nil), rc.records...)
}

// attrJSON turns an OTLP attribute value back into a JSON-comparable value.
func attrJSON(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return float64(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, attrJSON(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		out := map[string]any{}
		for _, kv := range x.KvlistValue.GetValues() {
			out[kv.GetKey()] = attrJSON(kv.GetValue())
		}
		return out
	}
	return nil
}

// checkRecords asserts that got holds exactly the JSONL lines want, in
// order, each with every field as a typed attribute.
func checkRecords(t *testing.T, got []*logspb.LogRecord, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("collector accepted %d records, want %d exactly once", len(got), len(want))
	}
	for i, lr := range got {
		var wantFields map[string]any
		testutil.NoError(t, json.Unmarshal([]byte(want[i]), &wantFields))
		gotFields := map[string]any{}
		for _, kv := range lr.GetAttributes() {
			if strings.Contains(kv.GetKey(), ".") {
				continue // semantic conventions: TestOTLP_SemanticConventions
			}
			gotFields[kv.GetKey()] = attrJSON(kv.GetValue())
		}
		if _, dup := gotFields["event"]; dup {
			t.Fatalf("record %d repeats event as an attribute", i)
		}
		gotFields["event"], gotFields["time"] = EventName, wantFields["time"]
		gb, _ := json.Marshal(gotFields)
		wb, _ := json.Marshal(wantFields)
		if string(gb) != string(wb) {
			t.Fatalf("record %d attributes\n got %s\nwant %s", i, gb, wb)
		}
		if _, ok := gotFields["seq"].(float64); !ok {
			t.Fatalf("record %d: seq is not an integer attribute", i)
		}
		if lr.GetSeverityText() != "WARN" || lr.GetSeverityNumber() != logspb.SeverityNumber_SEVERITY_NUMBER_WARN {
			t.Fatalf("record %d severity %v %q", i, lr.GetSeverityNumber(), lr.GetSeverityText())
		}
		if lr.GetEventName() != EventName || lr.GetBody().GetStringValue() == "" {
			t.Fatalf("record %d event name %q body %q", i, lr.GetEventName(), lr.GetBody().GetStringValue())
		}
		ts, _ := time.Parse(TimeLayout, wantFields["time"].(string))
		if lr.GetTimeUnixNano() != uint64(ts.UnixNano()) {
			t.Fatalf("record %d timestamp %d, want %s", i, lr.GetTimeUnixNano(), ts)
		}
	}
}

func fastRetry(endpoint string, batch int) OTLPConfig {
	return OTLPConfig{Endpoint: endpoint, Batch: batch, Timeout: 5 * time.Second,
		RetryInitial: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, RetryElapsed: 10 * time.Second}
}

// Every record of the fixture scenarios reaches the collector once, with
// all its attributes, although the collector first answers 503: the SDK
// exporter retries with back-off and Export returns only when accepted.
func TestOTLP_EveryRecordArrivesDespite503(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	want := lines(exportAll(t, ctx, st))
	rc := &receiver{fail: 3}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	sink, err := NewOTLP(ctx, fastRetry(srv.URL, 5))
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	checkRecords(t, rc.got(), want)
	if rc.refused != 3 || rc.service != "fledger" {
		t.Fatalf("refused %d requests (want 3), service.name %q", rc.refused, rc.service)
	}
}

// Following with an OTLP sink, a batch the collector keeps refusing past
// the exporter's retry budget is not acknowledged; Follow tries it again
// and, once the collector is back, every record has arrived exactly once
// and the consumer has acknowledged the whole stream.
func TestOTLP_FollowAcknowledgesOnlyAcceptedRecords(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	want := lines(exportAll(t, ctx, st))
	rc := &receiver{fail: 12}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg := fastRetry(srv.URL, 8)
	cfg.RetryElapsed = 100 * time.Millisecond // give up quickly: Follow retries
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())

	var sinkErrors int
	var mu sync.Mutex
	fcfg := FollowConfig{Consumer: "otlp", Batch: 5, RetryInitial: 20 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		OnError: func(error) { mu.Lock(); sinkErrors++; mu.Unlock() }}
	_, cancel, wait := follow(t, st, sink, fcfg)
	testutil.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := len(rc.got()); got < len(want) {
			return fmt.Errorf("%d records received, want %d", got, len(want))
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	cancel()
	wait()
	checkRecords(t, rc.got(), want)
	mu.Lock()
	defer mu.Unlock()
	if sinkErrors == 0 {
		t.Fatal("the collector's refusals never failed an export: retry budget not exercised")
	}
	// Nothing is pending: a new run on the same consumer gets nothing.
	rc2 := &receiver{}
	srv2 := httptest.NewServer(rc2)
	defer srv2.Close()
	sink2, err := NewOTLP(ctx, fastRetry(srv2.URL, 8))
	testutil.NoError(t, err)
	defer sink2.Shutdown(context.Background())
	_, cancel2, wait2 := follow(t, st, sink2, fcfg)
	time.Sleep(500 * time.Millisecond)
	cancel2()
	wait2()
	if n := len(rc2.got()); n != 0 {
		t.Fatalf("restarted exporter sent %d records again", n)
	}
}
