package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/internal/testutil"
	"github.com/fledger/fledger/projections"
)

// serve on --nats refusing a projection database built from another
// ledger (a stream rotated under it) names the rebuild command with its
// --nats flags — the generic hint sent the operator to `fledger --data
// <dir> stats --rebuild`, which looks for an embedded store there.
func TestServe_OtherLedgerDatabaseHintKeepsTheNATSFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	oldURL, _ := listenerWriter(t, ctx, "w-pass")
	newURL, _ := listenerWriter(t, ctx, "w-pass")
	data := t.TempDir()
	// The database of the old stream, where serve on the new one looks.
	if out, err := runFledger(t, "--data", data, "--nats", oldURL, "config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runFledger(t, "--data", data, "--nats", oldURL, "stats"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	testutil.NoError(t, os.Rename(filepath.Join(data, natsDBFile(oldURL)), filepath.Join(data, natsDBFile(newURL))))
	if out, err := runFledger(t, "--data", data, "--nats", newURL, "config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	_, err := runFledger(t, "--data", data, "--nats", newURL, "serve", "--http", "127.0.0.1:0", "--no-micro")
	redacted := strings.Replace(newURL, "w-pass", "xxxxx", 1)
	want := "rebuild the projections with `fledger --data " + data + " --nats " + redacted + " stats --rebuild`"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, projections.ErrOtherLedger) {
		t.Fatalf("serve on the rotated stream: %v\nwant it to hold %s", err, want)
	}
}
