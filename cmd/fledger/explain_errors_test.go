package main

import "testing"

// explain's own errors: a turn or session it cannot pick is named with
// the stream's agents, and an id several agents have says --agent picks
// one (no "replay:" prefix: the words are explain's).
func TestExplain_LookupErrorsAreExplains(t *testing.T) {
	data := twoAgentLedger(t)
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"explain", "storm"}, "explain: several agents have a turn storm (alpha, beta); --agent AGENT picks one"},
		{[]string{"explain", "nope"}, "explain: no turn nope (agents: alpha, beta)"},
		{[]string{"explain", "storm", "--agent", "gamma"}, "explain: no turn storm of agent gamma (agents: alpha, beta)"},
		{[]string{"explain", "--session", "nosuch"}, "explain: no events for session nosuch (agents: alpha, beta)"},
		{[]string{"explain", "--session", "slack-dm-bob", "--agent", "gamma"}, "explain: no events for session slack-dm-bob of agent gamma (agents: alpha, beta)"},
		{[]string{"explain", "--session", "slack-dm-bob", "--since", "2026-03-02T10:00:00Z", "--until", "2026-03-02t09:00:00z"},
			"--since 2026-03-02T10:00:00Z is after --until 2026-03-02t09:00:00z"},
	} {
		out, _, err := runFledger2(t, append([]string{"--data", data}, c.args...)...)
		if err == nil || err.Error() != c.err || out != "" {
			t.Errorf("%v: %v\nwant %s\nstdout %q", c.args, err, c.err, out)
		}
	}
}
