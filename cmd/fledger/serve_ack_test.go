package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// serve --ack-quarantined-through past the stream's last sequence is
// refused before anything is served: it would acknowledge stray messages
// no one has seen yet.
func TestServe_AckQuarantinedPastTheStreamRefused(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	if out, err := runFledger(t, "--data", data, "run", scen); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	_, err := runFledger(t, "--data", data, "serve", "--http", "127.0.0.1:0", "--ack-quarantined-through", "99999")
	if err == nil || !strings.HasPrefix(err.Error(), "--ack-quarantined-through 99999 is past the stream's last sequence") {
		t.Fatalf("serve: %v", err)
	}
}
