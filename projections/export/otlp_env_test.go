package export

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"

	"github.com/fledger/fledger/internal/testutil"
)

// clearOTELEnv unsets the OTEL_* variables the tests use, so that the
// developer's environment cannot leak in.
func clearOTELEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT",
		"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_LOGS_INSECURE",
		"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE"} {
		t.Setenv(k, "")
	}
}

// fastCfg is an OTLPConfig without endpoint, retrying quickly.
func fastCfg(batch int) OTLPConfig {
	c := fastRetry("", batch)
	c.ServiceVersion, c.ServiceInstanceID = "v1.2.3", "0b6e2d2c-6a55-4b8e-9f0e-3c1f1f9a1d01"
	return c
}

// attrsOf returns a log record's attributes as JSON-comparable values.
func attrsOf(lr *logspb.LogRecord) map[string]any {
	m := map[string]any{}
	for _, kv := range lr.GetAttributes() {
		m[kv.GetKey()] = attrJSON(kv.GetValue())
	}
	return m
}

// checkSemconv asserts the semantic-convention attributes of every record
// against the JSONL lines want, and that the stream exercised each.
func checkSemconv(t *testing.T, got []*logspb.LogRecord, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("collector accepted %d records, want %d", len(got), len(want))
	}
	seen := map[string]int{}
	for i, lr := range got {
		var w Record
		testutil.NoError(t, json.Unmarshal([]byte(want[i]), &w))
		a := attrsOf(lr)
		for k := range a {
			seen[k]++
		}
		if a[AttrGenAIProviderName] != w.CandidateProvider || a[AttrGenAIRequestModel] != w.CandidateModel ||
			a[AttrGenAIAgentID] != w.Agent || a["candidateProvider"] != w.CandidateProvider {
			t.Fatalf("record %d: gen_ai attributes %v, record %+v", i, a, w)
		}
		if (w.Decision == SuccessDecision) != (a[AttrGenAIResponseModel] == w.CandidateModel) {
			t.Fatalf("record %d (%s): gen_ai.response.model %v", i, w.Decision, a[AttrGenAIResponseModel])
		}
		if w.SessionID != "" && a[AttrSessionID] != w.SessionID {
			t.Fatalf("record %d: session.id %v, want %q", i, a[AttrSessionID], w.SessionID)
		}
		if w.Status > 0 && a[AttrHTTPStatusCode] != float64(w.Status) {
			t.Fatalf("record %d: http.response.status_code %v, want %d", i, a[AttrHTTPStatusCode], w.Status)
		}
		if w.Decision == "candidate_failed" {
			want := w.Code
			if want == "" {
				want = w.Reason
			}
			if a[AttrErrorType] != want {
				t.Fatalf("record %d: error.type %v, want %q", i, a[AttrErrorType], want)
			}
		} else if _, ok := a[AttrErrorType]; ok {
			t.Fatalf("record %d (%s) has error.type", i, w.Decision)
		}
	}
	for _, k := range []string{AttrGenAIResponseModel, AttrErrorType, AttrHTTPStatusCode, AttrSessionID} {
		if seen[k] == 0 {
			t.Fatalf("no record carried %s", k)
		}
	}
}

// The bar of issue #18: with only OTEL_EXPORTER_OTLP_ENDPOINT and
// OTEL_SERVICE_NAME set, the collector sees that service name,
// service.version and service.instance.id, and gen_ai.* attributes on the
// decision records; OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS
// are honoured too.
func TestOTLP_EnvironmentEndpointServiceNameAndGenAI(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	want := lines(exportAll(t, ctx, st))
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "checkout-router")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging,service.name=overridden-by-OTEL_SERVICE_NAME")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=from-env")
	sink, err := NewOTLP(ctx, fastCfg(7))
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	if sink.Endpoint() != srv.URL+"/v1/logs" {
		t.Fatalf("endpoint %q", sink.Endpoint())
	}
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	checkRecords(t, rc.got(), want)
	checkSemconv(t, rc.got(), want)
	res := rc.res()
	for k, v := range map[string]string{"service.name": "checkout-router", "service.version": "v1.2.3",
		"service.instance.id": "0b6e2d2c-6a55-4b8e-9f0e-3c1f1f9a1d01", "deployment.environment.name": "staging",
		"telemetry.sdk.language": "go"} {
		if res[k] != v {
			t.Fatalf("resource %s = %q, want %q (resource %v)", k, res[k], v, res)
		}
	}
	if h := rc.header.Get("X-Api-Key"); h != "from-env" {
		t.Fatalf("header from OTEL_EXPORTER_OTLP_HEADERS: %q", h)
	}
}

// OTEL_RESOURCE_ATTRIBUTES may set service.name and service.version
// itself; without any, service.name is "fledger".
func TestOTLP_ResourceAttributesFromEnvironment(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	for _, tc := range []struct{ env, name, version string }{
		{"", "fledger", "v1.2.3"},
		{"service.name=ledger-a,service.version=9.9.9", "ledger-a", "9.9.9"},
	} {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tc.env)
		res, err := otlpResource(ctx, &OTLPConfig{ServiceVersion: "v1.2.3"})
		testutil.NoError(t, err)
		got := map[string]string{}
		for _, kv := range res.Attributes() {
			got[string(kv.Key)] = kv.Value.Emit()
		}
		if got["service.name"] != tc.name || got["service.version"] != tc.version {
			t.Fatalf("OTEL_RESOURCE_ATTRIBUTES=%q: resource %v", tc.env, got)
		}
	}
}

// Explicit settings (the command's flags) override the environment:
// endpoint, service name, headers.
func TestOTLP_FlagsOverrideEnvironment(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runScenario(t, ctx, st, "anthropic-overload", "main")
	want := lines(exportAll(t, ctx, st))
	envRC, flagRC := &receiver{}, &receiver{}
	envSrv, flagSrv := httptest.NewServer(envRC), httptest.NewServer(flagRC)
	defer envSrv.Close()
	defer flagSrv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", envSrv.URL+"/v1/logs")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc") // overridden by Protocol
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=from-env")
	cfg := fastCfg(50)
	cfg.Endpoint, cfg.Protocol, cfg.ServiceName = flagSrv.URL, ProtocolHTTP, "from-flag"
	cfg.Headers = map[string]string{"x-api-key": "from-flag"}
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	if len(envRC.got()) != 0 || len(flagRC.got()) != len(want) {
		t.Fatalf("env endpoint got %d records, flag endpoint %d (want %d)", len(envRC.got()), len(flagRC.got()), len(want))
	}
	if flagRC.service != "from-flag" || flagRC.header.Get("X-Api-Key") != "from-flag" {
		t.Fatalf("service.name %q, header %q", flagRC.service, flagRC.header.Get("X-Api-Key"))
	}
}

// Severity: WARN (13) for every decision; with SuccessInfo,
// candidate_succeeded at INFO (9).
func TestOTLP_SuccessInfoSeverity(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg := fastRetry(srv.URL, 50)
	cfg.SuccessInfo = true
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	var info, warn int
	for _, lr := range rc.got() {
		succ := attrsOf(lr)["decision"] == SuccessDecision
		switch {
		case succ && lr.GetSeverityNumber() == logspb.SeverityNumber_SEVERITY_NUMBER_INFO && lr.GetSeverityText() == "INFO":
			info++
		case !succ && lr.GetSeverityNumber() == logspb.SeverityNumber_SEVERITY_NUMBER_WARN && lr.GetSeverityText() == "WARN":
			warn++
		default:
			t.Fatalf("decision %v severity %v %q", attrsOf(lr)["decision"], lr.GetSeverityNumber(), lr.GetSeverityText())
		}
	}
	if info == 0 || warn == 0 {
		t.Fatalf("info %d warn %d: both kinds expected", info, warn)
	}
	if int(logspb.SeverityNumber_SEVERITY_NUMBER_WARN) != 13 || int(logspb.SeverityNumber_SEVERITY_NUMBER_INFO) != 9 {
		t.Fatal("severity numbers changed")
	}
}

// freeAddr returns a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A one-shot export to a collector that is down when it starts and up by
// the second attempt succeeds; one that stays down fails after the
// configured attempts with an error naming the endpoint.
func TestOTLP_OneShotRetriesUntilCollectorIsUp(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	want := lines(exportAll(t, ctx, st))

	addr := freeAddr(t)
	cfg := fastRetry("http://"+addr, 50)
	cfg.Attempts, cfg.AttemptInitial, cfg.AttemptMax = 4, 600*time.Millisecond, time.Second
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	rc := &receiver{}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: time.Second}
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the collector comes up before the second attempt (≥ 300 ms)
		defer wg.Done()
		time.Sleep(100 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listen %s: %v", addr, err)
			return
		}
		go srv.Serve(ln)
	}()
	start := time.Now()
	_, err = Range(ctx, st, 0, sink, 100)
	wg.Wait()
	testutil.NoError(t, err)
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("exported in %s: the first attempt cannot have failed", el)
	}
	checkRecords(t, rc.got(), want)

	down := fastRetry("http://"+freeAddr(t), 50)
	down.Attempts, down.AttemptInitial, down.AttemptMax = 3, 10*time.Millisecond, 20*time.Millisecond
	sink2, err := NewOTLP(ctx, down)
	testutil.NoError(t, err)
	defer sink2.Shutdown(context.Background())
	_, err = Range(ctx, st, 0, sink2, 100)
	if err == nil || !strings.Contains(err.Error(), down.Endpoint+"/v1/logs") || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("collector down: err %v", err)
	}
}

// grpcReceiver is an in-process OTLP/gRPC logs service.
type grpcReceiver struct {
	collogspb.UnimplementedLogsServiceServer
	rc *receiver
}

func (g *grpcReceiver) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	g.rc.mu.Lock()
	defer g.rc.mu.Unlock()
	g.rc.requests++
	g.rc.accept(req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// startGRPCReceiver serves a grpcReceiver in plain gRPC on a loopback
// port until the test ends; it returns its receiver and address.
func startGRPCReceiver(t *testing.T) (*receiver, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testutil.NoError(t, err)
	gs := grpc.NewServer()
	rc := &receiver{}
	collogspb.RegisterLogsServiceServer(gs, &grpcReceiver{rc: rc})
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return rc, ln.Addr().String()
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends over OTLP/gRPC to
// OTEL_EXPORTER_OTLP_ENDPOINT, with the same records and resource.
func TestOTLP_GRPCFromEnvironment(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runAll(t, ctx, st)
	want := lines(exportAll(t, ctx, st))
	rc, addr := startGRPCReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	t.Setenv("OTEL_SERVICE_NAME", "grpc-svc")
	sink, err := NewOTLP(ctx, fastCfg(5))
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	checkRecords(t, rc.got(), want)
	checkSemconv(t, rc.got(), want)
	if res := rc.res(); res["service.name"] != "grpc-svc" || res["service.version"] != "v1.2.3" {
		t.Fatalf("resource %v", res)
	}
}

// An unknown protocol or a malformed endpoint is refused up front.
func TestOTLP_BadProtocolAndEndpoint(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	if _, err := NewOTLP(ctx, OTLPConfig{Protocol: "http/json"}); err == nil || !strings.Contains(err.Error(), "unsupported OTLP protocol") {
		t.Fatalf("http/json: %v", err)
	}
	if _, err := NewOTLP(ctx, OTLPConfig{Endpoint: "collector:4318"}); err == nil {
		t.Fatal("endpoint without scheme accepted")
	}
}
