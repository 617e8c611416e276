package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// With --json every failure is JSON on stdout, exit status 1, nothing on
// stderr: {"error": …}, or for config check and config apply of a file
// that cannot be read the invalid-file object. Without --json the same
// failure is "fledger: …" on stderr.
func TestJSON_FailuresAreJSON(t *testing.T) {
	data := twoAgentLedger(t)
	missing := filepath.Join(t.TempDir(), "nonexist.yaml")
	for _, c := range []struct {
		name           string
		args           []string
		stdout, stderr string
	}{
		{"config check unreadable", []string{"config", "check", missing, "--json"}, `{
  "file": "` + missing + `",
  "valid": false,
  "problems": [
    {
      "path": "",
      "message": "open ` + missing + `: no such file or directory"
    }
  ]
}
`, ""},
		{"config apply unreadable", []string{"config", "apply", missing, "--agent", "alpha", "--json"}, `{
  "agent": "alpha",
  "file": "` + missing + `",
  "valid": false,
  "problems": [
    {
      "path": "",
      "message": "open ` + missing + `: no such file or directory"
    }
  ]
}
`, ""},
		{"config check unreadable, text", []string{"config", "check", missing}, "", "fledger: config: open " + missing + ": no such file or directory\n"},
		{"auth order set", []string{"auth", "order", "set", "--provider", "openai", "openai:ghost", "--agent", "gamma", "--json"},
			"{\"error\":\"engine: no config applied for this agent (record one with `fledger config apply --agent gamma FILE`)\"}\n", ""},
		{"config apply to a wildcard agent", []string{"config", "apply", filepath.Join("..", "..", "fixtures", "configs", "example.yaml"), "--agent", "*", "--json"},
			`{"error":"engine: bad request: agent \"*\" contains a wildcard (* or \u003e); name one agent id exactly"}` + "\n", ""},
		{"auth order set for a wildcard agent", []string{"auth", "order", "set", "--provider", "openai", "openai:a", "--agent", "a>b"},
			"", "fledger: engine: bad request: agent \"a>b\" contains a wildcard (* or >); name one agent id exactly\n"},
		{"auth order set by two lines", []string{"auth", "order", "set", "--provider", "openai", "openai:a", "--agent", "alpha", "--by", "x\nFAKE LINE"},
			"", "fledger: engine: bad request: by holds the control character U+000A at byte 1\n"},
		{"version", []string{"version", "extra", "--json"}, `{"error":"unknown command \"extra\" for \"fledger version\""}` + "\n", ""},
		{"explain", []string{"explain", "nope", "--json"}, `{"error":"explain: no turn nope (agents: alpha, beta)"}` + "\n", ""},
		{"explain, text", []string{"explain", "nope"}, "", "fledger: explain: no turn nope (agents: alpha, beta)\n"},
		{"turns", []string{"turns", "--since", "5", "--json"}, `{"error":"--since 5: not a time; this command takes no stream sequence, fledger events --from-seq 5 does"}` + "\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := newRootCmd()
			var out, errOut bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errOut)
			root.SetArgs(append([]string{"--data", data}, c.args...))
			code := execute(context.Background(), root)
			if code != 1 || out.String() != c.stdout || errOut.String() != c.stderr {
				t.Errorf("exit %d\nstdout %s\nstderr %s\nwant stdout %s\nwant stderr %s", code, out.String(), errOut.String(), c.stdout, c.stderr)
			}
		})
	}
}
