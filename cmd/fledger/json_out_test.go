package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fledger/fledger/commands/config"
)

// Every command that prints a result prints it as one JSON object with
// --json: config apply and check, auth order set/get/clear, replay (a
// rebuild and --verify), version. The commands run in order on one new
// ledger (config apply creates it); values that vary per run (elapsed
// time, rate) are checked for presence, then set to 0.
func TestJSON_SingleResultCommands(t *testing.T) {
	data := t.TempDir()
	cfgFile := filepath.Join("..", "..", "fixtures", "configs", "example.yaml")
	l, err := config.LoadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents: {defaults: {model: {fallbaks: []}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "replayed.sqlite")
	goVer := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVer = bi.GoVersion
	}
	for _, c := range []struct {
		name    string
		args    []string
		want    string
		exit1   bool
		varying []string
	}{
		{"config apply", []string{"config", "apply", cfgFile, "--json"},
			`{"agent":"main","file":"` + cfgFile + `","hash":"` + l.Hash + `","applied":true,"seq":1,"warnings":[],"notes":[]}`, false, nil},
		{"config apply again", []string{"config", "apply", cfgFile, "--agent", "main", "--json"},
			`{"agent":"main","file":"` + cfgFile + `","hash":"` + l.Hash + `","applied":false,"seq":1,"warnings":[],"notes":[]}`, false, nil},
		{"config check", []string{"config", "check", cfgFile, "--json"},
			`{"file":"` + cfgFile + `","valid":true,"hash":"` + l.Hash + `","profiles":5,"agent_entries":2,"warnings":[],"notes":[]}`, false, nil},
		{"config check invalid", []string{"config", "check", bad, "--json"},
			`{"file":"` + bad + `","valid":false,"problems":[{"path":"agents.defaults.model.fallbaks","message":"unknown key; did you mean \"fallbacks\"?"},` +
				`{"path":"agents.defaults.model.primary","message":"is required (provider/model)"}]}`, true, nil},
		{"auth order get none", []string{"auth", "order", "get", "--json"}, `{"agent":"main","orders":{}}`, false, nil},
		{"auth order set", []string{"auth", "order", "set", "--provider", "openai", "openai:api-key-backup", "openai:user@example.com", "--json"},
			`{"agent":"main","provider":"openai","profiles":["openai:api-key-backup","openai:user@example.com"],"events":["AuthOrderSet"],"seq":2}`, false, nil},
		{"auth order get", []string{"auth", "order", "get", "--provider", "openai", "--json"},
			`{"agent":"main","orders":{"openai":["openai:api-key-backup","openai:user@example.com"]}}`, false, nil},
		{"auth order get another provider", []string{"auth", "order", "get", "--provider", "anthropic", "--json"}, `{"agent":"main","orders":{}}`, false, nil},
		{"auth order clear", []string{"auth", "order", "clear", "--provider", "openai", "--json"},
			`{"agent":"main","provider":"openai","profiles":[],"events":["AuthOrderSet"],"seq":3}`, false, nil},
		{"replay", []string{"replay", "--out", db, "--json"},
			`{"database":"` + db + `","events":3,"commits":3,"last_seq":3,"quarantined":0,"elapsed_ms":0,"events_per_s":0}`, false, []string{"elapsed_ms", "events_per_s"}},
		{"replay --to-seq", []string{"replay", "--out", db, "--to-seq", "2", "--json"},
			`{"database":"` + db + `","events":2,"commits":2,"last_seq":2,"quarantined":0,"elapsed_ms":0,"events_per_s":0}`, false, []string{"elapsed_ms", "events_per_s"}},
		{"replay --verify", []string{"replay", "--verify", "--json"},
			`{"commits":3,"events":3,"last_seq":3,"turns":0,"checked":{"auth_order":2,"config":1},"diverged":0,"snapshots":[{"agent":"main","seq":3,"ok":true}]}`, false, nil},
		{"version", []string{"version", "--json"}, `{"version":"dev","go":"` + goVer + `"}`, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
			var ee *exitError
			if c.exit1 != (errors.As(err, &ee) && ee.code == 1) || err != nil && !c.exit1 {
				t.Fatalf("err %v\n%s%s", err, out, errOut)
			}
			var got, want map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			for _, k := range c.varying {
				if _, ok := got[k]; !ok {
					t.Errorf("no %q", k)
				}
				got[k] = 0.0
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", out, c.want)
			}
		})
	}
}

// Every command that prints a result has --json; the rest print none of
// their own (serve logs, export writes the records as its data, classify
// writes JSON Lines unless --table, completion prints scripts).
func TestJSON_EveryResultCommandHasTheFlag(t *testing.T) {
	noResult := map[string]bool{"fledger serve": true, "fledger export": true, "fledger completion": true, "fledger help": true}
	var missing []string
	root := newRootCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range allCommands(root) {
		if !c.Runnable() || noResult[c.CommandPath()] || strings.HasPrefix(c.CommandPath(), "fledger completion ") {
			continue
		}
		if c.Flags().Lookup("json") == nil {
			missing = append(missing, c.CommandPath())
		}
	}
	if len(missing) > 0 {
		t.Fatalf("no --json: %s", strings.Join(missing, ", "))
	}
}

// allCommands is root and every command under it.
func allCommands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		out = append(out, allCommands(c)...)
	}
	return out
}
