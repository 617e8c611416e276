package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// `fledger export --follow --metrics ADDR` after a scenario serves the
// fold: per-profile attempt counts, the provider-call latency histogram
// and fledger_build_info, a promlint-clean text exposition, and
// OpenMetrics when asked.
func TestExportMetrics_LintAfterScenario(t *testing.T) {
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "run", filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		root := newRootCmd()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs([]string{"--data", data, "export", "--follow", "--out", filepath.Join(t.TempDir(), "d.jsonl"), "--metrics", addr})
		_ = root.ExecuteContext(ctx)
	}()
	defer func() { cancel(); <-done }()

	get := func(accept string) (string, []byte, error) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.Header.Get("Content-Type"), b, err
	}
	var body []byte
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, b, err := get("")
		if err == nil && bytes.Contains(b, []byte(`fledger_projection_lag_events{projection="metrics"} 0`)) && bytes.Contains(b, []byte("fledger_attempts_total{")) {
			body = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never caught up: %v\n%.2000s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`fledger_attempts_total{agent="`, `profile="anthropic:work"`, `fledger_provider_call_duration_seconds_bucket{`,
		`fledger_build_info{goversion="`, `fledger_stream_last_sequence `, `fledger_projection_stalled_seconds{projection="metrics"} 0`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	ct, b, err := get("application/openmetrics-text;version=1.0.0")
	if err != nil || !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(string(b), "# EOF\n") {
		t.Errorf("OpenMetrics: %v %q %s", err, ct, fmt.Sprintf("%.200s", b))
	}
}
