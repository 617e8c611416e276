package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/fledger/fledger/events"
)

// Pointed with --nats at the listener of an embedded server on the same
// --data, read commands connect as its read-only user and writing
// commands as its writer, from the credentials files it keeps there; an
// explicit --nats-user (and password) wins over them.
func TestNATSListener_CredentialsFromTheDataDirectory(t *testing.T) {
	data := t.TempDir()
	st, err := events.Open(context.Background(), events.WithDataDir(data), events.WithListen(0), events.WithSyncAlways(false, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	url := st.ClientURL()
	scen := filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml")
	if out, err := runFledger(t, "--data", data, "--nats", url, "run", scen); err != nil {
		t.Fatalf("run through the listener as its writer: %v\n%s", err, out)
	}
	out, err := runFledger(t, "--data", data, "--nats", url, "events")
	if err != nil || !strings.Contains(out, "TurnStarted") {
		t.Fatalf("events through the listener as its reader: %v\n%s", err, out)
	}
	last, err := st.LastSeq(context.Background(), "")
	if err != nil || last == 0 {
		t.Fatalf("last seq %d: %v", last, err)
	}
	// Given credentials are used instead: a wrong password is refused.
	t.Setenv("FLEDGER_NATS_PASSWORD", "wrong")
	if _, err := runFledger(t, "--data", data, "--nats", url, "--nats-user", events.ReaderUser, "events"); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("wrong password: %v", err)
	}
}
