package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// A serve that cannot take its HTTP address stops before it records
// anything: its --config is not applied to the fleet.
func TestServe_AddressInUseRecordsNothing(t *testing.T) {
	t.Setenv("NATS_URL", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := t.TempDir()
	out, err := runFledger(t, "--data", data, "serve", "--http", ln.Addr().String(), "--config", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("%v, want the address refused\n%s", err, out)
	}
	if e := entries(t, data); e != "" {
		t.Fatalf("serve wrote %s before failing to listen", e)
	}
}
