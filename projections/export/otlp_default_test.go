package export

import (
	"context"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/internal/testutil"
)

// withDefault points the default endpoint *v at url for the test.
func withDefault(t *testing.T, v *string, url string) {
	old := *v
	*v = url
	t.Cleanup(func() { *v = old })
}

// With no endpoint configured (no Endpoint, no OTEL_EXPORTER_OTLP_
// [LOGS_]ENDPOINT) the HTTP exporter sends where Endpoint() says, the
// specification's http://localhost:4318/v1/logs in plain HTTP (here the
// default pointed at a plain-HTTP test server), also with
// OTEL_EXPORTER_OTLP_INSECURE=true; OTEL_EXPORTER_OTLP_LOGS_INSECURE=false
// asks for TLS: the same default over https (a TLS test server trusted
// through OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE). Before, the SDK's own
// default sent TLS to the plain port the endpoint named http://.
func TestOTLP_DefaultEndpointIsPlainHTTP(t *testing.T) {
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runScenario(t, ctx, st, "anthropic-overload", "main")
	want := lines(exportAll(t, ctx, st))
	for _, tc := range []struct {
		name string
		env  map[string]string
		tls  bool
	}{
		{"nothing set", nil, false},
		{"insecure true", map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}, false},
		{"insecure false", map[string]string{"OTEL_EXPORTER_OTLP_LOGS_INSECURE": "false"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearOTELEnv(t)
			rc := &receiver{}
			srv := httptest.NewUnstartedServer(rc)
			if tc.tls {
				srv.StartTLS()
				ca := filepath.Join(t.TempDir(), "ca.pem")
				testutil.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
				t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", ca)
			} else {
				srv.Start()
			}
			defer srv.Close()
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			hostPort := strings.TrimPrefix(strings.TrimPrefix(srv.URL, "https://"), "http://")
			withDefault(t, &defaultHTTPEndpoint, "http://"+hostPort+"/v1/logs")
			sink, err := NewOTLP(ctx, fastCfg(50))
			testutil.NoError(t, err)
			defer sink.Shutdown(context.Background())
			if sink.Endpoint() != srv.URL+"/v1/logs" {
				t.Fatalf("endpoint %q, want %q", sink.Endpoint(), srv.URL+"/v1/logs")
			}
			_, err = Range(ctx, st, 0, sink, 4)
			testutil.NoError(t, err)
			checkRecords(t, rc.got(), want)
		})
	}
}

// The gRPC exporter's default is the specification's http://localhost:4317
// without TLS too (here pointed at a plain gRPC test server).
func TestOTLP_DefaultGRPCEndpointIsPlain(t *testing.T) {
	clearOTELEnv(t)
	ctx := testutil.Context(t)
	st, _ := testutil.OpenStore(t)
	runScenario(t, ctx, st, "anthropic-overload", "main")
	want := lines(exportAll(t, ctx, st))
	rc, addr := startGRPCReceiver(t)
	withDefault(t, &defaultGRPCEndpoint, "http://"+addr)
	cfg := fastCfg(50)
	cfg.Protocol = ProtocolGRPC
	sink, err := NewOTLP(ctx, cfg)
	testutil.NoError(t, err)
	defer sink.Shutdown(context.Background())
	if sink.Endpoint() != "http://"+addr {
		t.Fatalf("endpoint %q", sink.Endpoint())
	}
	_, err = Range(ctx, st, 0, sink, 4)
	testutil.NoError(t, err)
	checkRecords(t, rc.got(), want)
}

// The defaults themselves: the specification's, plain http; https when
// OTEL_EXPORTER_OTLP_[LOGS_]INSECURE is false.
func TestOTLP_DefaultEndpoints(t *testing.T) {
	for _, tc := range []struct {
		insecure, logsInsecure string
		http, grpc             string
	}{
		{"", "", "http://localhost:4318/v1/logs", "http://localhost:4317"},
		{"true", "", "http://localhost:4318/v1/logs", "http://localhost:4317"},
		{"FALSE", "", "https://localhost:4318/v1/logs", "https://localhost:4317"},
		{"false", "true", "http://localhost:4318/v1/logs", "http://localhost:4317"},
	} {
		clearOTELEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", tc.insecure)
		t.Setenv("OTEL_EXPORTER_OTLP_LOGS_INSECURE", tc.logsInsecure)
		if h, g := defaultEndpoint(defaultHTTPEndpoint), defaultEndpoint(defaultGRPCEndpoint); h != tc.http || g != tc.grpc {
			t.Fatalf("INSECURE=%q LOGS_INSECURE=%q: %s and %s, want %s and %s", tc.insecure, tc.logsInsecure, h, g, tc.http, tc.grpc)
		}
	}
}
