package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// `config check` refuses a misspelt key and an overflowing duration,
// naming the path (and the key meant); --allow-unknown-keys keeps unknown
// keys as warnings.
func TestConfigCheck_RefusesMisspeltKeyAndOverflow(t *testing.T) {
	typo := writeConfig(t, "agents:\n  defaults:\n    model:\n      primary: anthropic/claude-opus-4-6\n      fallbaks: [openai/gpt-5]\nauth:\n  cooldowns:\n    resetOnExpry: true\n")
	_, err := runFledger(t, "config", "check", typo)
	want := typo + `: invalid config
  agents.defaults.model.fallbaks: unknown key; did you mean "fallbacks"?
  auth.cooldowns.resetOnExpry: unknown key; did you mean "resetOnExpiry"?`
	if err == nil || err.Error() != want {
		t.Fatalf("misspelt keys: got %v\nwant %s", err, want)
	}
	out, err := runFledger(t, "config", "check", "--allow-unknown-keys", typo)
	if err != nil || !strings.Contains(out, "warning: "+typo+`: agents.defaults.model.fallbaks: unknown key (ignored); did you mean "fallbacks"?`) || !strings.Contains(out, typo+": valid") {
		t.Fatalf("--allow-unknown-keys: %v\n%s", err, out)
	}

	overflow := writeConfig(t, "auth:\n  cooldowns:\n    ladderMs: [9223372036854775807]\n")
	_, err = runFledger(t, "config", "check", overflow)
	want = overflow + ": invalid config: auth.cooldowns.ladderMs[0]: 9223372036854775807 is longer than the limit of 31622400000 ms (366 days)"
	if err == nil || err.Error() != want {
		t.Fatalf("overflow: got %v\nwant %s", err, want)
	}
}

// Every fixture config still passes.
func TestConfigCheck_FixturesAreValid(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "configs", "*.yaml"))
	for _, f := range files {
		out, err := runFledger(t, "config", "check", f)
		if err != nil || !strings.Contains(out, f+": valid") || strings.Contains(out, "warning:") {
			t.Fatalf("%s: %v\n%s", f, err, out)
		}
	}
}

// `config apply` of a config without agents.defaults.model.primary (an
// empty file the worst case) is refused, nothing appended, unless
// --allow-no-primary: then it is applied with config check's note (on
// stderr, or in --json's "notes").
func TestConfigApply_NoPrimaryRefusedUnlessAllowed(t *testing.T) {
	data := t.TempDir()
	empty := writeConfig(t, "")
	noPrimary := writeConfig(t, "auth:\n  profiles:\n    \"openai:a\": {provider: openai, type: api_key}\n")
	entryOnly := writeConfig(t, "agents:\n  entries:\n    coder: {model: openai/gpt-5}\n")
	refused := func(f string) string {
		return f + " sets no agents.defaults.model.primary: a turn that names no model cannot start (503 no_config); nothing applied: set a primary, or pass --allow-no-primary if every turn names its model"
	}
	const note = "sets no agents.defaults.model.primary: a turn that names no model cannot start"
	for _, c := range []struct {
		name           string
		args           []string
		wantErr        string
		wantOut, wantE string
	}{
		{"empty file", []string{"config", "apply", empty}, refused(empty), "", ""},
		{"empty file, --json", []string{"config", "apply", empty, "--json"}, refused(empty), "", ""},
		{"profiles only", []string{"config", "apply", noPrimary}, refused(noPrimary), "", ""},
		// An agents.entries model serves only its own agent.
		{"another agent of the same file", []string{"config", "apply", entryOnly, "--agent", "main"}, refused(entryOnly), "", ""},
		{"allowed", []string{"config", "apply", noPrimary, "--allow-no-primary"}, "",
			"applied config HASH for agent \"main\" as stream sequence 1\n", "note: " + noPrimary + " " + note + "\n"},
		{"allowed, --json", []string{"config", "apply", noPrimary, "--allow-no-primary", "--json"}, "",
			`{"agent":"main","file":"` + noPrimary + `","hash":"HASH","applied":false,"seq":1,"warnings":[],"notes":["` + note + `"]}`, ""},
		// An agent whose own agents.entries model serves it is not refused.
		{"an entry model of the agent's own", []string{"config", "apply", entryOnly, "--agent", "coder"}, "",
			"applied config HASH for agent \"coder\" as stream sequence 2\n", "note: " + entryOnly + " " + note + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr || out != "" {
					t.Fatalf("got %v, out %q\nwant error %s", err, out, c.wantErr)
				}
				if ents, _ := os.ReadDir(data); len(ents) != 0 {
					t.Fatalf("refused, but the ledger was opened: %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out = regexp.MustCompile(`sha256:[0-9a-f]{64}`).ReplaceAllString(out, "HASH")
			if strings.HasPrefix(c.wantOut, "{") {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(out)); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				out = b.String()
			}
			if out != c.wantOut || errOut != c.wantE {
				t.Fatalf("stdout %q stderr %q\nwant %q, %q", out, errOut, c.wantOut, c.wantE)
			}
		})
	}
}

// The fresh-user breaker's files, through `config check`: each is refused
// with every problem at once, naming the file.
func TestConfigCheck_BreakerFiles(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"second document after an empty one (c10)", "---\nagents: {}\n---\nagents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n",
			": invalid config: holds 2 YAML documents; a config is one document (the second starts at line 3)"},
		{"second document not YAML (c11)", "agents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n---\n{{{ not yaml at all\n",
			": invalid config: holds 2 YAML documents; a config is one document (the second starts at line 5)"},
		{"primary with @profile (c9)", "auth:\n  profiles:\n    \"openai:a\": {provider: openai, type: api_key}\nagents:\n  defaults:\n    model:\n      primary: openai/gpt-5@openai:a\n",
			`: invalid config: agents.defaults.model.primary: "openai/gpt-5@openai:a" names auth profile "openai:a" after its @; a configured model takes no @profile (it would be called as model "gpt-5@openai:a"): put the profile first in auth.order.openai, or pin it per session with /model openai/gpt-5@openai:a`},
		{"type error and negative count (twopass)", "retry:\n  provider:\n    maxRetries: -3\nfailover:\n  skipTtlMs: \"10\"\nagents:\n  defaults:\n    model:\n      primary: openai/gpt-5\n",
			": invalid config\n  failover.skipTtlMs: expected a whole number, got the string \"10\"\n  retry.provider.maxRetries: -3 is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := writeConfig(t, c.text)
			_, err := runFledger(t, "config", "check", f)
			if err == nil || err.Error() != f+c.want {
				t.Fatalf("got %v\nwant %s", err, f+c.want)
			}
		})
	}
}

// config apply with an empty --agent names the flag (the engine's message did not).
func TestConfigApply_EmptyAgentNamesTheFlag(t *testing.T) {
	data := t.TempDir()
	out, err := runFledger(t, "--data", data, "config", "apply", "--agent", " ", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"))
	if err == nil || err.Error() != "--agent is empty: name the agent the config applies to (default main)" {
		t.Fatalf("%v\n%s", err, out)
	}
}
