package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A server (serve, view) that a signal stops before it served says so and
// ends with the signal's status (130 for SIGINT), not status 1 and
// "context canceled"; one that a signal stops while it serves ends with
// status 0, its normal way to stop.
func TestServer_SignalDuringStartUpEndsWithTheSignalsStatus(t *testing.T) {
	_, global := ledgerOnServer(t)
	for _, args := range [][]string{
		{"serve", "--http", "127.0.0.1:0", "--no-micro"},
		{"view", "--http", "127.0.0.1:0"},
	} {
		t.Run(args[0]+"/before start-up", func(t *testing.T) {
			p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), []string{signalFirstEnv + "=1"}, append(global, args...)...)
			select {
			case <-p.exited:
			case <-time.After(exitBound):
				t.Fatalf("still running %v after one SIGINT", exitBound)
			}
			var ee *exec.ExitError
			if !errors.As(p.err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("ended with %v, want exit status 130; stderr:\n%s", p.err, p.stderr.String())
			}
			want := "fledger: interrupted: " + args[0] + " stopped during start-up, before it served\n"
			if got := p.stderr.String(); !strings.HasSuffix(got, want) {
				t.Fatalf("stderr %q, want it to end %q", got, want)
			}
		})
		t.Run(args[0]+"/while serving", func(t *testing.T) {
			p := startCLI(t, filepath.Join(t.TempDir(), "stdout"), nil, append(global, args...)...)
			p.waitServing(t)
			p.interrupt(t)
		})
	}
}
