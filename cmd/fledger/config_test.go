package main

import (
	"os"
	"path/filepath"
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
