package main

import "testing"

// Integer flags out of range are refused before anything is opened, in
// decisions' wording, instead of being taken as "all" or "no limit" or
// silently ignored.
func TestFlagChecks_OutOfRangeIsRefused(t *testing.T) {
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"turns", "--limit", "-1"}, "--limit -1: the number of turns is 0 (all) or more"},
		{[]string{"decisions", "--limit", "-2"}, "--limit -2: the number of decisions is 0 (all) or more"},
		{[]string{"events", "--width", "-3"}, "--width -3: the payload column's width is 0 (no limit) or more"},
		{[]string{"stats", "--batch", "0"}, "--batch 0: the number of events per transaction is 1 or more"},
		{[]string{"sessions", "--batch", "-1"}, "--batch -1: the number of events per transaction is 1 or more"},
		{[]string{"turns", "--batch", "0", "--at", "2026-03-02T09:00:00Z"}, "--batch 0: the number of events per transaction is 1 or more"},
		{[]string{"replay", "--batch", "0"}, "--batch 0: the number of events per transaction is 1 or more"},
		{[]string{"classify", "--max-line-bytes", "0"}, "--max-line-bytes 0: the line length limit in bytes is 1 or more"},
		{[]string{"serve", "--nats-listen", "-1"}, "--nats-listen -1: a port is 1 to 65535 (0 = none)"},
		{[]string{"serve", "--nats-listen", "70000"}, "--nats-listen 70000: a port is 1 to 65535 (0 = none)"},
	} {
		t.Run(c.args[0]+" "+c.args[1], func(t *testing.T) {
			out, err := runFledger(t, append([]string{"--data", data}, c.args...)...)
			if err == nil || err.Error() != c.want {
				t.Fatalf("%v: error %v, want %q\n%s", c.args, err, c.want, out)
			}
		})
	}
}
