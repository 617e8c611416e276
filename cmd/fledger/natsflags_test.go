package main

import (
	"strings"
	"testing"
)

// The connection flags of an external server given without one are
// refused, naming the flag, before the local ledger is read.
func TestNATSFlagsWithoutNATSRefused(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	for _, flag := range []string{"--nats-creds", "--nats-user", "--nats-password", "--nats-tls-ca", "--nats-tls-cert", "--nats-tls-key"} {
		out, err := runFledger(t, "--data", data, flag, "x", "events")
		want := flag + " without --nats (or NATS_URL): it is for an external NATS server"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q\n%s", flag, err, want, out)
		}
	}
}

// --atomic-batches takes auto, on or off (any case), and names itself when
// it is given something else.
func TestAtomicBatchesFlag(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	if out, err := runFledger(t, "--data", data, "--atomic-batches", "sometimes", "events"); err == nil ||
		!strings.Contains(err.Error(), `--atomic-batches "sometimes": want auto, on or off`) {
		t.Errorf("sometimes: %v\n%s", err, out)
	}
	for _, v := range []string{"auto", "ON", "off"} {
		if out, err := runFledger(t, "--data", data, "--atomic-batches", v, "version"); err != nil {
			t.Errorf("%s: %v\n%s", v, err, out)
		}
	}
}
