package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runFledger(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// `fledger run --check` passes on every fixture scenario, all runs sharing
// one --data directory (each run in its own namespace).
func TestRunCmd_EveryFixturePassesCheck(t *testing.T) {
	data := t.TempDir()
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "scenarios", "*.yaml"))
	if len(files) < 8 {
		t.Fatalf("%d scenarios", len(files))
	}
	for _, f := range files {
		out, err := runFledger(t, "--data", data, "run", f, "--check")
		if err != nil {
			t.Fatalf("%s: %v\n%s", f, err, out)
		}
		if !strings.Contains(out, "check: every expectation met") {
			t.Fatalf("%s:\n%s", f, out)
		}
	}
	out, err := runFledger(t, "--data", data, "run", files[0], "--json")
	if err != nil || !strings.HasPrefix(out, "{") {
		t.Fatalf("--json: %v\n%s", err, out)
	}
}

// A scenario whose expectation is wrong exits 1 with the difference.
func TestRunCmd_CheckFailsWithExit1(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "scenarios", "context-overflow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), "outcome: stopped", "outcome: succeeded", 1)
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runFledger(t, "--data", t.TempDir(), "run", f, "--check")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(out, "outcome\n    want \"succeeded\"\n    got  \"stopped\"") {
		t.Fatalf("output:\n%s", out)
	}
}

// A filter value outside its closed set is refused, naming the set,
// before any ledger is opened (an empty table would read as "none").
func TestDecisions_UnknownReasonRefused(t *testing.T) {
	_, err := runFledger(t, "--data", t.TempDir(), "decisions", "--reason", "bogus")
	if err == nil || !strings.Contains(err.Error(), `--reason "bogus" is not a failure reason (one of auth, `) {
		t.Fatalf("error %v", err)
	}
}

// Option values outside what they can mean, or flags the mode asked for
// does not use, are refused, naming the flag, rather than quietly read as
// a default or ignored.
func TestOptions_OutOfRangeRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-body", "0"}, "--max-body 0: a request body limit is at least 1 byte"},
		{[]string{"serve", "--max-body", "-1"}, "--max-body -1: a request body limit is at least 1 byte"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--no-micro", "--agent", "main,"}, "serve: agent 2 of 2 is empty"},
		{[]string{"decisions", "--limit", "-1"}, "--limit -1: the number of decisions is 0 (all) or more"},
		{[]string{"serve", "--finished-turns", "0"}, "--finished-turns 0: the finished turns each engine keeps in memory is 1 (default 1024) or more"},
		{[]string{"serve", "--agent", ""}, `--agent "": name the agent id(s) to serve (default main)`},
		{[]string{"serve", "--agent", " "}, `serve: --agent: agent " " contains whitespace or control characters`},
		{[]string{"--first-seq", "0", "events"}, `--first-seq 0: every stream starts at 1 without the flag; to continue an archived stream, give its last sequence + 1`},
		{[]string{"--first-seq", "1", "events"}, `--first-seq 1: every stream starts at 1 without the flag`},
		{[]string{"replay", "--strict"}, "--strict is for --verify (it makes quarantined messages fail the verification)"},
		{[]string{"replay", "--verify", "--out", "x.db"}, "--out names the database a rebuild writes; --verify and --what-if write none"},
	} {
		_, err := runFledger(t, append([]string{"--data", t.TempDir()}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// A run that stops at a step it cannot run prints no check line — the
// check line comes last, and only for a run that finished — and exits 1
// with the file, the step and the error; a finished run ends with the
// check line.
func TestRunCmd_StoppedRunIsNotChecked(t *testing.T) {
	const head = `name: stop
start: "2026-03-02T09:00:00Z"
config: {agents: {defaults: {model: {primary: openai/gpt-5}}}}
script:
  - at: "+0s"
    turn: {id: a, session: s, responses: [{candidate: openai/gpt-5, ok: true}], expect: {outcome: succeeded}}
`
	for _, c := range []struct {
		name, body, lastLine, err string
	}{
		{"stopped", head + "  - at: \"+1s\"\n    turn: {id: b, session: s, expect: {outcome: succeeded}}\n",
			"run stopped at script[1] (+1s): the steps after it did not run, and nothing was checked",
			"stop.yaml: script[1]: turn b attempt 1 (openai/gpt-5, no profile, first): no scripted response matches and the scenario has no default"},
		{"finished", head, "check: every expectation met", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "stop.yaml")
			if err := os.WriteFile(f, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := runFledger(t, "--data", t.TempDir(), "run", f, "--check")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if last := lines[len(lines)-1]; last != c.lastLine {
				t.Errorf("last line %q, want %q\n%s", last, c.lastLine, out)
			}
			if c.err == "" {
				if err != nil {
					t.Errorf("err %v", err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 1 || !strings.HasSuffix(ee.msg, c.err) {
				t.Errorf("err %v, want exit 1 with %q", err, c.err)
			}
			if strings.Contains(out, "check: every expectation met") {
				t.Errorf("a stopped run says every expectation was met:\n%s", out)
			}
		})
	}
}
