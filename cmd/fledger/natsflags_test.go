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
