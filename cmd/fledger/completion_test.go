package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fledger/fledger/projections"
)

// complete runs cobra's hidden __complete command in-process, as the
// shell scripts do, and returns its completions (the last line, the
// directive, dropped after checking it is :4, no file completion).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, _, err := runFledger2(t, append([]string{"__complete"}, args...)...)
	if err != nil {
		t.Fatalf("__complete %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != ":4" {
		t.Fatalf("__complete %v: directive %q, want :4 (no file completion)\n%s", args, last, out)
	}
	return lines[:len(lines)-1]
}

func TestCompletion_FixedValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"events", "--type", ""}, []string{"AttemptFailed", "AttemptStarted", "AttemptSucceeded", "AuthOrderSet",
			"CandidateSkipped", "ChainRetryScheduled", "CompactionCompleted", "ConfigApplied", "FallbackNoticeStateChanged",
			"FallbackStepped", "LiveSwitchMarked", "NoticeSent", "ProfileCleared", "ProfileFailureRecorded", "ProfileSucceeded", "ProfileUsed",
			"RetryScheduled", "SessionAuthPinned", "SessionAuthUnpinned", "SessionModelCleared", "SessionModelSelected",
			"SessionPruned", "SessionReset", "TurnExhausted", "TurnStarted", "TurnStopped", "TurnSucceeded", "TurnSwitched"}},
		{[]string{"turns", "--outcome", ""}, []string{"succeeded", "exhausted", "stopped", "switched", "unfinished"}},
		{[]string{"decisions", "--reason", ""}, []string{"auth", "auth_permanent", "format", "rate_limit", "overloaded",
			"billing", "server_error", "timeout", "tls_certificate", "context_overflow", "model_not_found",
			"session_expired", "empty_response", "no_error_details", "unclassified", "unknown"}},
		{[]string{"export", "--format", ""}, []string{"jsonl", "otlp"}},
		{[]string{"export", "--otlp-protocol", ""}, []string{"http/protobuf", "grpc"}},
		{[]string{"export", "--otlp-compression", ""}, []string{"gzip", "none"}},
	} {
		if got := complete(t, c.args...); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%v:\ngot  %v\nwant %v", c.args, got, c.want)
		}
	}
}

// Agents and turn ids come from the projection database the command
// would read, opened read-only: before any query command built it there
// is nothing to complete, and completing creates nothing — no ledger in a
// mistyped --data, no projection database.
func TestCompletion_AgentsAndTurnIDsFromTheProjections(t *testing.T) {
	data := twoAgentLedger(t)
	missing := filepath.Join(t.TempDir(), "fledger-dat")
	dbFile := filepath.Join(data, projections.DefaultFile)
	for _, args := range [][]string{
		{"--data", missing, "turns", "--agent", ""},
		{"--data", missing, "explain", ""},
		{"--data", data, "turns", "--agent", ""},
		{"--data", data, "explain", ""},
	} {
		if got := complete(t, args...); len(got) != 0 {
			t.Errorf("%v before any projection: %v", args, got)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("completion created %s: %v", missing, err)
	}
	if _, err := os.Stat(dbFile); !os.IsNotExist(err) {
		t.Fatalf("completion created %s: %v", dbFile, err)
	}
	if out, _, err := runFledger2(t, "--data", data, "turns"); err != nil {
		t.Fatalf("turns: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"turns", "--agent", ""}, []string{"alpha", "beta"}},
		{[]string{"events", "--agent", ""}, []string{"alpha", "beta"}},
		{[]string{"auth", "order", "get", "--agent", ""}, []string{"alpha", "beta"}},
		// Most recent first; an id two agents have is offered once,
		// described by both.
		{[]string{"explain", ""}, []string{
			"still-cooling\tagents alpha, beta (--agent AGENT picks one)",
			"storm\tagents alpha, beta (--agent AGENT picks one)"}},
		{[]string{"explain", "--agent", "beta", "sto"}, []string{
			"storm\tagent beta, session slack-dm-bob, started 2026-03-02T14:00:00Z, succeeded"}},
		{[]string{"explain", "storm", ""}, nil},
		{[]string{"explain", "--session", "slack-dm-bob", ""}, nil},
		{[]string{"decisions", "--turn", "still"}, []string{
			"still-cooling\tagents alpha, beta (--agent AGENT picks one)"}},
		{[]string{"decisions", "--agent", "alpha", "--turn", "still"}, []string{
			"still-cooling\tagent alpha, session slack-dm-bob, started 2026-03-02T14:01:00Z, succeeded"}},
		{[]string{"events", "--agent", "gamma", "--turn", ""}, nil},
		// --db names the database to read.
		{[]string{"turns", "--db", filepath.Join(t.TempDir(), "none.sqlite"), "--agent", ""}, nil},
	} {
		got := complete(t, append([]string{"--data", data}, c.args...)...)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%v:\ngot  %q\nwant %q", c.args, got, c.want)
		}
	}
}

// Every --agent and --turn flag completes.
func TestCompletion_EveryAgentAndTurnFlag(t *testing.T) {
	n := 0
	for _, c := range allCommands(newRootCmd()) {
		for _, name := range []string{"agent", "turn"} {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			n++
			if _, ok := c.GetFlagCompletionFunc(name); !ok {
				t.Errorf("%s --%s does not complete", c.CommandPath(), name)
			}
		}
	}
	if n < 14 {
		t.Fatalf("only %d --agent/--turn flags", n)
	}
}

// One completion per turn id, most recent first: described by its turn,
// or by every agent that has it.
func TestCompletion_TurnIDsDescribedByTheirAgents(t *testing.T) {
	ref := func(agent, id string, min int) projections.TurnRef {
		return projections.TurnRef{Agent: agent, TurnID: id, SessionID: "s-" + agent,
			StartedAt: projections.UnixMillis(time.Date(2026, 3, 2, 14, min, 0, 0, time.UTC).UnixMilli()), Outcome: "succeeded"}
	}
	for _, c := range []struct {
		name string
		refs []projections.TurnRef
		want []string
	}{
		{"none", nil, []string{}},
		{"one agent", []projections.TurnRef{ref("main", "t1", 1)}, []string{
			"t1\tagent main, session s-main, started 2026-03-02T14:01:00Z, succeeded"}},
		{"shared and not", []projections.TurnRef{ref("zed", "storm", 3), ref("main", "calm", 2), ref("alpha", "storm", 1)}, []string{
			"storm\tagents alpha, zed (--agent AGENT picks one)",
			"calm\tagent main, session s-main, started 2026-03-02T14:02:00Z, succeeded"}},
		{"control characters", []projections.TurnRef{ref("main", "t\x1b[2J", 4), ref("main", "a\nb", 3), ref("x\ny", "t2", 2)}, []string{
			"t2\tagent x\\ny, session s-x\\ny, started 2026-03-02T14:02:00Z, succeeded"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := turnCompletions(c.refs)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
