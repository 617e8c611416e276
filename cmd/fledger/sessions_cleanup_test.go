package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fledger/fledger/engine"
)

// `fledger sessions cleanup` on a recorded incident (March 2026, so idle
// for months): a dry run by default that records nothing, --enforce
// prunes each session once (a second run finds none), --json prints the
// report, verify re-decides the prunes, and bad flags are refused by
// name.
func TestSessionsCleanup(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	sc, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	if out, err := runFledger(t, "--data", data, "run", sc); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	out, err := runFledger(t, "--data", data, "turns", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var row struct{ Agent string }
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &row); err != nil || row.Agent == "" {
		t.Fatalf("turns --json: %v\n%s", err, out)
	}
	before, _ := runFledger(t, "--data", data, "events", "--json")

	dry, err := runFledger(t, "--data", data, "sessions", "cleanup", "--agent", row.Agent)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, dry)
	}
	if !strings.Contains(dry, "dm-alice") || !strings.Contains(dry, "would prune 1 of 1 sessions") || !strings.Contains(dry, "--enforce") {
		t.Fatalf("dry run output:\n%s", dry)
	}
	if after, _ := runFledger(t, "--data", data, "events", "--json"); after != before {
		t.Fatal("the dry run recorded something")
	}

	out, err = runFledger(t, "--data", data, "sessions", "cleanup", "--agent", row.Agent, "--enforce", "--json")
	if err != nil {
		t.Fatalf("enforce: %v\n%s", err, out)
	}
	var rep engine.PruneReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.DryRun || rep.Sessions != 1 || len(rep.Pruned) != 1 || rep.Pruned[0].Session != "dm-alice" || rep.Pruned[0].Seq == 0 {
		t.Fatalf("report %+v", rep)
	}
	if rows, err := runFledger(t, "--data", data, "sessions", "--agent", row.Agent); err != nil || strings.Contains(rows, "dm-alice") {
		t.Fatalf("sessions after the prune (its row is deleted): %v\n%s", err, rows)
	}
	again, err := runFledger(t, "--data", data, "sessions", "cleanup", "--agent", row.Agent, "--enforce")
	if err != nil || !strings.Contains(again, "pruned 0 of 0 sessions") {
		t.Fatalf("second run: %v\n%s", err, again)
	}
	if v, err := runFledger(t, "--data", data, "replay", "--verify"); err != nil || !strings.Contains(v, "every recorded decision follows from its inputs") {
		t.Fatalf("verify: %v\n%s", err, v)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--enforce", "--dry-run"}, "choose one"},
		{[]string{"--prune-after", "0"}, `--prune-after "0"`},
		{[]string{"--prune-after", "soon"}, "not an age"},
		{[]string{"--prune-after", "30s"}, `--prune-after "30s": an age is at least 1m`},
		{[]string{"--limit", "-1"}, "--limit -1"},
		{[]string{"--workers", "0"}, "--workers 0"},
		{[]string{"--enforce", "--agent", "nosuch"}, "no agent nosuch in this ledger"},
		{[]string{"--agent", ""}, "--agent is empty"},
	} {
		out, err := runFledger(t, append([]string{"--data", data, "sessions", "cleanup", "--agent", row.Agent}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q\n%s", c.args, err, c.want, out)
		}
	}
}

// serve refuses a bad maintenance age or interval before it opens
// anything.
func TestServe_SessionMaintenanceFlagsRefused(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--session-prune-after", "soon"}, "--session-prune-after \"soon\": not an age"},
		{[]string{"--session-prune-after", "59s"}, `--session-prune-after "59s": an age is at least 1m`},
		{[]string{"--session-prune-after", "0"}, `--session-prune-after "0": an age is at least 1m and at most`},
		{[]string{"--session-prune-after", "-1m"}, `--session-prune-after "-1m": an age is at least 1m`},
		{[]string{"--session-prune-after", "30d", "--session-maintenance-every", "0s"}, "--session-maintenance-every 0s: at least 1s"},
		{[]string{"--session-prune-after", "30d", "--session-maintenance-every", "1ms"}, "--session-maintenance-every 1ms: at least 1s"},
		{[]string{"--session-maintenance-every", "1h"}, "without --session-prune-after"},
	} {
		out, err := runFledger(t, append([]string{"--data", data, "serve", "--http", "127.0.0.1:0"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q\n%s", c.args, err, c.want, out)
		}
	}
	if entries(t, data) != "" {
		t.Fatalf("serve created files before refusing: %s", entries(t, data))
	}
}

// A --json run that fails after pruning prints one object: the report's
// fields and the error.
func TestCleanupJSON_ReportAndError(t *testing.T) {
	rep := &engine.PruneReport{Agent: "main", Pruned: []engine.PrunedSession{{Session: "s1", Seq: 7}}, Unsettled: 1}
	b, err := json.Marshal(cleanupJSON{PruneReport: rep, Error: "interrupted: sessions cleanup stopped"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["agent"] != "main" || got["unsettled"] != float64(1) || got["error"] != "interrupted: sessions cleanup stopped" || len(got["pruned"].([]any)) != 1 {
		t.Fatalf("one object with the report and the error, got %s", b)
	}
}
