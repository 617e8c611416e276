package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A read of an agent the ledger has no event of is an error naming the
// ledger's agents (exit 1; with --json the error object), not an empty
// answer; a write to a new agent is still taken.
func TestReads_UnknownAgentIsAnError(t *testing.T) {
	data := twoAgentLedger(t)
	const msg = "no agent nobody in this ledger (agents: alpha, beta)"
	for _, args := range [][]string{
		{"auth", "order", "get", "--agent", "nobody"},
		{"stats", "--agent", "nobody"},
		{"turns", "--agent", "nobody"},
		{"sessions", "--agent", "nobody"},
		{"decisions", "--agent", "nobody"},
		{"events", "--agent", "nobody"},
		{"replay", "--verify", "--agent", "nobody"},
		{"view", "--http", "127.0.0.1:0", "--agent", "alpha,nobody"},
	} {
		for _, asJSON := range []bool{false, true} {
			a := append([]string{"--data", data}, args...)
			wantOut, wantErr := "", "fledger: "+msg+"\n"
			if asJSON {
				if args[0] == "replay" {
					continue // no --json
				}
				a = append(a, "--json")
				wantOut, wantErr = `{"error":"`+msg+`"}`+"\n", ""
			}
			root := newRootCmd()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs(a)
			if code := execute(context.Background(), root); code != 1 || out.String() != wantOut || errOut.String() != wantErr {
				t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant stdout %q stderr %q", a, code, out.String(), errOut.String(), wantOut, wantErr)
			}
		}
	}
	// Known agents still read; writes make a new agent.
	for _, args := range [][]string{
		{"stats", "--agent", "alpha"},
		{"events", "--agent", "beta", "--to-seq", "3"},
		{"auth", "order", "get", "--agent", "alpha"},
		{"config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"), "--agent", "gamma"},
		{"auth", "order", "get", "--agent", "gamma"},
		// A projection that is not the whole stream answers for what it
		// holds: an agent it lacks is an empty answer, not an error.
		{"stats", "--agent", "gamma", "--no-catch-up"},
		{"turns", "--agent", "alpha", "--at", "2026-01-01T00:00:00Z"},
	} {
		if out, _, err := runFledger2(t, append([]string{"--data", data}, args...)...); err != nil {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}

// A command that writes to a new agent whose id the rule refuses, on a
// data directory that holds no ledger yet, is refused before anything is
// created: no store, no lock, no projection database.
func TestWrites_BadNewAgentCreatesNothing(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--agent", "*", "--http", "127.0.0.1:0"}, `serve: --agent: agent "*" contains a wildcard (* or >); name one agent id exactly`},
		{[]string{"config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"), "--agent", "my agent"},
			`engine: bad request: agent "my agent" contains whitespace or control characters`},
	} {
		data := filepath.Join(t.TempDir(), "d")
		_, _, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want it to begin %q", c.args, err, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%v: %s was created (%v)", c.args, data, err)
		}
	}
}
