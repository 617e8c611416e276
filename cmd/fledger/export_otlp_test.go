package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSeen is what an in-test OTLP/HTTP collector received.
type otlpSeen struct {
	mu       sync.Mutex
	resource map[string]string
	records  int
	genAI    int // records with gen_ai.provider.name and gen_ai.request.model
	header   string
}

func (s *otlpSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req collogspb.ExportLogsServiceRequest
	if r.URL.Path != "/v1/logs" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.header = r.Header.Get("Authorization")
	for _, rl := range req.GetResourceLogs() {
		s.resource = map[string]string{}
		for _, a := range rl.GetResource().GetAttributes() {
			s.resource[a.GetKey()] = a.GetValue().GetStringValue()
		}
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				s.records++
				n := 0
				for _, kv := range lr.GetAttributes() {
					if kv.GetKey() == "gen_ai.provider.name" || kv.GetKey() == "gen_ai.request.model" {
						n++
					}
				}
				if n == 2 {
					s.genAI++
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	_, _ = w.Write(out)
}

// The bar of issue #18: `fledger export --format otlp` with only
// OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME set reaches the
// collector with that service name, service.version from the build, a
// service.instance.id kept in the data directory (the same on the next
// run), and gen_ai.* attributes on every decision record. Flags override
// the environment.
func TestExportCmd_OTLPFromEnvironment(t *testing.T) {
	t.Setenv("NATS_URL", "")
	for _, k := range []string{"OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_TIMEOUT"} {
		t.Setenv(k, "")
	}
	data := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "anthropic-overload.yaml"))
	if out, err := runFledger(t, "--data", data, "run", scen); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	seen := &otlpSeen{}
	srv := httptest.NewServer(seen)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "router-eu")
	if out, err := runFledger(t, "--data", data, "export", "--format", "otlp"); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	v, _ := buildVersion()
	res := seen.resource
	if seen.records == 0 || seen.genAI != seen.records || res["service.name"] != "router-eu" || res["service.version"] != v {
		t.Fatalf("%d records, %d with gen_ai.*, resource %v (version %q)", seen.records, seen.genAI, res, v)
	}
	id, err := os.ReadFile(filepath.Join(data, instanceIDFile))
	if err != nil || res["service.instance.id"] != strings.TrimSpace(string(id)) {
		t.Fatalf("service.instance.id %q, file %q (%v)", res["service.instance.id"], id, err)
	}
	first := res["service.instance.id"]

	if out, err := runFledger(t, "--data", data, "export", "--format", "otlp", "--endpoint", srv.URL+"/v1/logs",
		"--otlp-service-name", "from-flag", "--header", "Authorization=Bearer x"); err != nil {
		t.Fatalf("export with flags: %v\n%s", err, out)
	}
	if res := seen.resource; res["service.name"] != "from-flag" || res["service.instance.id"] != first || seen.header != "Bearer x" {
		t.Fatalf("flags: resource %v (instance id was %q), Authorization %q", res, first, seen.header)
	}

	// A collector that is down: the one-shot export fails after its
	// attempts, naming the endpoint.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	_, err = runFledger(t, "--data", data, "export", "--format", "otlp", "--otlp-attempts", "1")
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1/v1/logs") {
		t.Fatalf("collector down: %v", err)
	}
	// OTLP flags are refused with --format jsonl.
	if _, err := runFledger(t, "--data", data, "export", "--otlp-protocol", "grpc"); err == nil || !strings.Contains(err.Error(), "--otlp-protocol is for --format otlp") {
		t.Fatalf("jsonl with --otlp-protocol: %v", err)
	}
}
