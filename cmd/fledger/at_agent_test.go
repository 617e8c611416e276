package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// --agent A --at T cuts agent A's history at T, not the whole stream's:
// a scenario run twice on its virtual clock stamps the second run's
// commits like the first's, and the whole stream's cut (the first commit
// stamped after T, in the first run) left the second agent with nothing.
func TestAt_CutsTheNamedAgentsHistory(t *testing.T) {
	t.Setenv("NATS_URL", "")
	data := t.TempDir()
	scen, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "scenarios", "incident-day.yaml"))
	var agents []string
	for range 2 {
		out, err := runFledger(t, "--data", data, "run", scen)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		f := strings.Fields(out[strings.Index(out, "agent ")+len("agent "):])
		agents = append(agents, strings.TrimSuffix(f[0], ","))
	}
	for _, a := range agents {
		out, err := runFledger2Out(t, "--data", data, "stats", "--agent", a, "--at", "2026-03-02T09:00:12Z", "--json")
		if err != nil {
			t.Fatalf("stats --agent %s --at: %v\n%s", a, err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				Agent, ProfileID, CooldownReason string
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			got = append(got, r.Agent+" "+r.ProfileID+" "+r.CooldownReason)
		}
		want := []string{a + " anthropic:personal rate_limit", a + " anthropic:work rate_limit", a + " openai:user@example.com "}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("stats --agent %s --at 09:00:12:\n%s\nwant:\n%s", a, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
